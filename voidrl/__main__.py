import sys

from voidrl.cli import main

sys.exit(main())
