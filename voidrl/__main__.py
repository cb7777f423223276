from voidrl.cli import run

run()
