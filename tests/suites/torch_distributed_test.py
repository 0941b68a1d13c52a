#!/usr/bin/env python3
"""What of suites/torch_distributed.py runs without a GPU: the rank prefix of --spawn, fault
injection, and the verdict when PyTorch is missing (the result file and exit code the worker reads).
The collectives themselves run only on a 2-GPU node (scripts/h200x2-run.sh)."""
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest

sys.dont_write_bytecode = True  # importing the program must leave no __pycache__ in suites/
PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "suites", "torch_distributed.py")
spec = importlib.util.spec_from_file_location("torch_distributed", PROG)
td = importlib.util.module_from_spec(spec)
spec.loader.exec_module(td)
HAVE_TORCH = importlib.util.find_spec("torch") is not None


class RankPrefixTest(unittest.TestCase):
    def test_every_line_is_prefixed_once_whatever_the_writes(self):
        out = io.StringIO()
        p = td.RankPrefix(out, 1)
        p.write("Traceback (most recent call last):\n  File \"x.py\", li")
        p.write("ne 3, in f\nRuntimeError: bo")
        p.write("om\n\n")
        self.assertEqual(out.getvalue(), "[rank1]: Traceback (most recent call last):\n"
                                         "[rank1]:   File \"x.py\", line 3, in f\n"
                                         "[rank1]: RuntimeError: boom\n[rank1]: \n")


class InjectTest(unittest.TestCase):
    def args(self, fault, rank=1):
        return types.SimpleNamespace(fault=fault, fault_rank=rank, hang_s=0.0)

    def test_raise_only_on_the_chosen_rank(self):
        td.inject(self.args("raise"), 0, "all_reduce")  # not this rank
        td.inject(self.args("none"), 1, "all_reduce")
        with self.assertRaisesRegex(RuntimeError, r"^injected fault: rank 1 raises before the all_reduce$"):
            td.inject(self.args("raise"), 1, "all_reduce")

    def test_hang_says_so_before_it_sleeps(self):
        buf = io.StringIO()
        old, sys.stdout = sys.stdout, buf
        try:
            td.inject(self.args("hang", 0), 0, "all_gather")
        finally:
            sys.stdout = old
        self.assertIn("torch_distributed: injected fault: rank 0 hangs instead of entering the all_gather", buf.getvalue())


@unittest.skipIf(HAVE_TORCH, "PyTorch is installed here: the missing-PyTorch verdict cannot be seen")
class WithoutTorchTest(unittest.TestCase):
    def run_prog(self, *argv, env=None):
        with tempfile.TemporaryDirectory() as d:
            result = os.path.join(d, "r.json")
            e = dict(os.environ, GAUNTLET_RESULT_FILE=result, **(env or {}))
            p = subprocess.run([sys.executable, PROG, *argv], env=e, capture_output=True, text=True, timeout=60)
            doc = json.load(open(result)) if os.path.exists(result) else None
            return p, doc

    def test_a_rank_reports_infra_error(self):
        p, doc = self.run_prog("--test", "allreduce", env={"RANK": "0", "WORLD_SIZE": "2"})
        self.assertEqual(p.returncode, 5, p.stdout + p.stderr)
        self.assertEqual(doc["verdict"], "infra_error")
        self.assertIn("PyTorch not importable", doc["detail"])

    def test_only_rank_zero_writes_the_result(self):
        p, doc = self.run_prog("--test", "allreduce", env={"RANK": "1", "WORLD_SIZE": "2"})
        self.assertEqual(p.returncode, 5)
        self.assertIsNone(doc)

    def test_the_spawn_parent_reports_infra_error(self):
        p, doc = self.run_prog("--spawn", "2", "--test", "tp_matmul")
        self.assertEqual(p.returncode, 5, p.stdout + p.stderr)
        self.assertEqual(doc["verdict"], "infra_error")


class ArgumentsTest(unittest.TestCase):
    def test_bad_arguments_are_refused(self):
        for argv in (["--test", "nope"], ["--fault", "explode", "--test", "allreduce"], []):
            p = subprocess.run([sys.executable, PROG, *argv], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, argv)


if __name__ == "__main__":
    unittest.main()
