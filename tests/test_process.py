"""voidrl.process: OpenMP's spin count and glibc's heap settings, made at import, each only where the user left them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from voidrl.process import OPENMP_SPIN_COUNT, keep_freed_heap, openmp_environment


def test_openmp_spin_count_set_where_the_user_chose_no_waiting_policy():
    assert openmp_environment({}, torch_imported=False) == {"GOMP_SPINCOUNT": OPENMP_SPIN_COUNT}


@pytest.mark.parametrize("environ", [{"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "300000"}])
def test_openmp_setting_of_the_user_kept(environ):
    assert openmp_environment(environ, torch_imported=False) == {}


def test_openmp_left_alone_once_torch_has_loaded_it():
    assert openmp_environment({}, torch_imported=True) == {}


def test_heap_settings_left_to_a_user_who_set_glibc_variables():
    assert keep_freed_heap({"MALLOC_ARENA_MAX": "2"}) is False


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's mallopt")
def test_heap_settings_applied_on_glibc():
    assert keep_freed_heap({}) is True


def test_import_sets_the_spin_count_before_torch_loads():
    environ = {name: value for name, value in os.environ.items() if name not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    script = "import os, sys, voidrl; print(os.environ.get('GOMP_SPINCOUNT'), 'torch' in sys.modules)"
    printed = subprocess.run([sys.executable, "-c", script], env=environ, capture_output=True, text=True, check=True).stdout
    assert printed.split() == [OPENMP_SPIN_COUNT, "False"]
