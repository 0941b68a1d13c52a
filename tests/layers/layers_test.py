#!/usr/bin/env python3
"""An include against the grain fails to build (docs/ARCHITECTURE.md).

For every layer, takes the real compile command of one of its sources from compile_commands.json and
compiles a one-line probe with it: including a header of each layer it depends on (its CMakeLists.txt
DEPS) must compile, and including a header of any other layer must fail with "No such file".
Usage: layers_test.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# One light header per layer: what a probe includes.
PROBE = {
    'core': 'core/status.h', 'store': 'store/sqlite.h', 'daemon': 'daemon/events.h', 'http': 'http/http.h',
    'api': 'api/sse.h', 'workers': 'workers/log_sink.h', 'cli': 'cli/cli.h', 'slurm': 'slurm/slurm.h',
    'app': 'app/serve.h',
}


def declared_deps(src, layer):
    text = open(os.path.join(src, layer, 'CMakeLists.txt')).read()
    m = re.search(r'gauntlet_layer\(\s*' + layer + r'\b(.*?)\)', text, re.S)
    if not m:
        sys.exit(f'{layer}/CMakeLists.txt declares no gauntlet_layer({layer} ...)')
    deps = re.search(r'\bDEPS\b(.*?)(\bLIBS\b|\bSOURCES\b|$)', m.group(1), re.S)
    return set(deps.group(1).split()) if deps else set()


def closure(src):
    direct = {l: declared_deps(src, l) for l in PROBE}
    full = {}
    for l in PROBE:
        seen, todo = set(), list(direct[l])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(direct[d])
        full[l] = seen
    return full


def main():
    src, build = sys.argv[1], sys.argv[2]
    commands = json.load(open(os.path.join(build, 'compile_commands.json')))
    deps = closure(src)
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for layer in PROBE:
            # A layer's own source, or under a unity build (cmake/BuildSpeed.cmake) its batch file,
            # which compiles in the layer's object folder with the same flags.
            entry = next((c for c in commands if (os.path.relpath(c['file'], src).startswith(layer + '/')
                          and c['file'].endswith('.cc')) or
                          os.path.relpath(c['file'], build).startswith(f'{layer}/CMakeFiles/gauntlet_{layer}.dir/Unity/')), None)
            if entry is None:
                failures.append(f'{layer}: no compile command in compile_commands.json')
                continue
            args = shlex.split(entry['command']) if 'command' in entry else entry['arguments']
            # Keep the compiler and its flags; drop the output, dependency file and source.
            keep, skip = [], False
            for a in args:
                if skip:
                    skip = False
                    continue
                if a in ('-o', '-MF', '-MT', '-MQ'):
                    skip = True
                    continue
                if a in ('-c', '-MD', '-MMD') or a == entry['file'] or a.endswith(os.path.basename(entry['file'])):
                    continue
                keep.append(a)
            if os.path.basename(keep[0]) == 'ccache':
                keep = keep[1:]
            for other, header in PROBE.items():
                if other == layer:
                    continue
                allowed = other in deps[layer]
                probe = os.path.join(tmp, f'{layer}_{other}.cc')
                with open(probe, 'w') as f:
                    f.write(f'#include "{header}"\n')
                r = subprocess.run(keep + ['-fsyntax-only', probe], cwd=entry['directory'],
                                   capture_output=True, text=True)
                checked += 1
                if allowed and r.returncode != 0:
                    failures.append(f'{layer} depends on {other} but cannot include {header}:\n{r.stderr[-600:]}')
                if not allowed and (r.returncode == 0 or 'No such file' not in r.stderr):
                    failures.append(f'{layer} does not depend on {other} yet `#include "{header}"` '
                                    f'{"compiled" if r.returncode == 0 else "failed otherwise: " + r.stderr[-300:]}')
    for f in failures:
        print('FAIL', f)
    print(f'{checked} probes, {len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
