#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The device ABI of the qtests, as the C compiler sees it.

Writes OUT/kite_abi.json (default out/qtest/) from include/kite/kite_hw.h
and the model's qemu/kite_limits.h:

  consts   every object-like KITE_* macro and every enumerator: its value
           (and the few macro calls listed in EXPRESSIONS, by their text)
  structs  every struct of those headers: its size and, for each field in
           order (the members of anonymous unions and structs included),
           its offset, size and type (integer, nested struct or array)

The names come from the preprocessor (cc -dM -E for the macros) and from a
scan of the preprocessed headers' enum and struct bodies; every number
comes from a C program written here, compiled and run: each macro must be
an integer constant expression (a _Static_assert with -Wpedantic as an
error checks it), and the compiler also confirms the scan's view of every
field's type. Anything it cannot evaluate fails the build, naming the
macro or field; nothing is skipped silently.

Usage: abi_gen.py [--out DIR] [--force]
  KITE_INCLUDE=DIR   use DIR/kite/kite_hw.h instead of include/kite/kite_hw.h
  CC                 the compiler (default cc)
The table is rebuilt only when an input (a header, this file, the compiler
or the include path) changed. On failure the first line on stderr is the
reason, the rest the compiler's diagnostics; the exit status is 1.
"""

import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO, "out", "qtest")
TABLE = "kite_abi.json"

# The headers, as the probe includes them.
HEADERS = ("kite/kite_hw.h", "kite_limits.h")

# KITE_* macros that are not values by construction, with why. Any other
# object-like KITE_* macro must be an integer constant expression.
NOT_VALUES = {
    "KITE_HW_H": "include guard of kite_hw.h",
    "KITE_LIMITS_H": "include guard of kite_limits.h",
}

# Function-like macros the tests need applied, evaluated like the constants
# and stored under their text.
EXPRESSIONS = ("KITE_ABI_VERSION(KITE_ABI_MAJOR, KITE_ABI_MINOR)",)

CFLAGS = ["-std=gnu11", "-Wall", "-Werror"]


class AbiBuildError(Exception):
    """The table cannot be built: str() is one line, .details the rest."""

    def __init__(self, reason, details=""):
        super().__init__(reason)
        self.details = details


def include_dirs():
    kite = os.environ.get("KITE_INCLUDE") or os.path.join(REPO, "include")
    return [os.path.abspath(kite), os.path.join(REPO, "qemu")]


def compiler():
    return shlex.split(os.environ.get("CC") or "cc")


def cc_cmd(*args):
    incs = ["-I" + d for d in include_dirs()]
    return compiler() + CFLAGS + incs + list(args)


# cc's diagnostics in plain ASCII, whatever the caller's locale.
CC_ENV = dict(os.environ, LC_ALL="C")


def run(cmd, what):
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       env=CC_ENV)
    if r.returncode != 0:
        raise AbiBuildError("%s failed (%s)" % (what, " ".join(cmd)),
                            r.stderr)
    return r.stdout


def inputs_key(inputs):
    """Hash of everything the table is made from."""
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(repr((compiler(), CFLAGS, include_dirs())).encode())
    for path in inputs:
        h.update(path.encode() + b"\0")
        try:
            with open(path, "rb") as f:
                h.update(f.read())
        except OSError:
            h.update(b"missing")
    return h.hexdigest()


def is_fresh(table):
    """TABLE (a loaded kite_abi.json) was built from today's inputs."""
    return table.get("key") == inputs_key(table.get("inputs", []))


# --------------------------------------------------------------------------
# Names: the preprocessor and a scan of the preprocessed headers
# --------------------------------------------------------------------------

def header_deps(probe):
    """The non-system headers the probe reads (cc -MM), absolute paths."""
    out = run(cc_cmd("-MM", probe), "listing the headers")
    words = out.replace("\\\n", " ").split(":", 1)[1].split()
    return sorted(os.path.abspath(w) for w in words if w != probe)


def macros(probe):
    """The object-like KITE_* macros: {name: definition text}."""
    found = {}
    for line in run(cc_cmd("-dM", "-E", probe), "cc -dM -E").splitlines():
        m = re.match(r"#define (KITE_\w+)(\(?)\s*(.*)$", line)
        if m and not m.group(2):            # "(" right after: function-like
            found[m.group(1)] = m.group(3)
    for name in NOT_VALUES:
        if name not in found:
            raise AbiBuildError("%s is listed as not a value but is not "
                                "defined: update NOT_VALUES" % name)
        del found[name]
    return found


def header_text(probe, headers):
    """The preprocessed text that comes from HEADERS (linemarkers followed)."""
    keep, lines = False, []
    for line in run(cc_cmd("-E", probe), "cc -E").splitlines():
        m = re.match(r'# \d+ "(.*)"', line)
        if m:
            keep = os.path.abspath(m.group(1)) in headers
        elif keep:
            lines.append(line)
    return "\n".join(lines)


TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|'
                   r'\d[\w.]*|\S')


def is_ident(tok):
    return re.match(r"[A-Za-z_]\w*$", tok) is not None


class Scan:
    """Enumerator names and struct bodies of preprocessed header text."""

    def __init__(self, text):
        self.tok = TOKEN.findall(text)
        self.enumerators = []
        self.structs = {}           # name -> [(field, kind, struct type)]
        self._top_level()

    def _top_level(self):
        tok, i, depth = self.tok, 0, 0
        while i < len(tok):
            t = tok[i]
            if depth == 0 and t in ("struct", "union") and \
                    i + 2 < len(tok) and is_ident(tok[i + 1]) and \
                    tok[i + 2] == "{":
                if t == "union":
                    raise AbiBuildError("union %s: only structs are "
                                        "supported" % tok[i + 1])
                name = tok[i + 1]
                self.structs[name], i = self._members(i + 3, name)
                continue
            if depth == 0 and t == "enum":
                j = i + 1 + (is_ident(tok[i + 1]))
                if tok[j] == "{":
                    i = self._enum(j + 1)
                    continue
            depth += (t == "{") - (t == "}")
            i += 1

    def _enum(self, i):
        tok, item, paren = self.tok, [], 0
        while True:
            t = tok[i]
            if paren == 0 and t in (",", "}"):
                if item:
                    if not is_ident(item[0]):
                        raise AbiBuildError("enum item %r not understood" %
                                            " ".join(item))
                    self.enumerators.append(item[0])
                item = []
                if t == "}":
                    return i + 1
            else:
                paren += (t == "(") - (t == ")")
                item.append(t)
            i += 1

    def _members(self, i, where):
        """Fields from tok[i] to the closing brace; returns (fields, next)."""
        tok, fields = self.tok, []
        while tok[i] != "}":
            if tok[i] in ("struct", "union") and tok[i + 1] == "{":
                inner, i = self._members(i + 2, where)
                if tok[i] != ";":
                    raise AbiBuildError("struct %s: named member aggregate "
                                        "%s not supported" % (where, tok[i]))
                fields += inner                 # anonymous: flattened
                i += 1
                continue
            j = tok.index(";", i)
            decl = tok[i:j]
            if any(t in decl for t in ("{", ",", ":")):
                raise AbiBuildError("struct %s: member %r not understood" %
                                    (where, " ".join(decl)))
            if decl[-1] == "]":
                lb = decl.index("[")
                if decl.count("[") != 1:
                    raise AbiBuildError("struct %s: multi-dimensional array "
                                        "%r" % (where, " ".join(decl)))
                name, typ, kind = decl[lb - 1], decl[:lb - 1], "array"
            else:
                name, typ, kind = decl[-1], decl[:-1], "int"
            stype = typ[1] if len(typ) == 2 and typ[0] == "struct" else None
            fields.append((name, kind, stype))
            i = j + 1
        return fields, i + 1


# --------------------------------------------------------------------------
# Numbers: a C program
# --------------------------------------------------------------------------

PRELUDE = """\
/* Generated by tests/qtest/abi_gen.py: the qtests' view of the ABI. */
#include <stddef.h>
#include <stdio.h>
#include "kite/kite_hw.h"
#include "kite_limits.h"

#define NEG(x) (!((x) >= 0))
#define M(s, f) (((struct s *)0)->f)

static void put_const(const char *name, int neg, unsigned long long v)
{
    if (neg)
        printf("const %s %lld\\n", name, (long long)v);
    else
        printf("const %s %llu\\n", name, v);
}

static void put_field(const char *s, const char *f, size_t off, size_t size,
              size_t elem, int neg)
{
    printf("field %s %s %zu %zu %zu %d\\n", s, f, off, size, elem, neg);
}

/* Integer constant expressions only (a folded float or string is not). */
#pragma GCC diagnostic error "-Wpedantic"
"""


class Program:
    """The C source, with what each line checks for the diagnostics."""

    def __init__(self):
        self.lines = PRELUDE.splitlines()
        self.what = {}

    def add(self, line, what=None):
        self.lines.append(line)
        if what:
            self.what[len(self.lines)] = what

    def text(self):
        return "\n".join(self.lines) + "\n"


def c_str(s):
    return '"%s"' % s


def write_program(consts, scan):
    """consts: {name: what to say about it}; returns a Program."""
    p = Program()
    for name, what in consts.items():
        p.add("_Static_assert((%s) || 1, %s);" % (name, c_str(name)), what)
    for s, fields in scan.structs.items():
        for f, kind, stype in fields:
            what = "struct %s field %s" % (s, f)
            m = "M(%s, %s)" % (s, f)
            elem = m + "[0]" if kind == "array" else m
            if kind == "array":
                p.add("_Static_assert(!__builtin_types_compatible_p("
                      "__typeof__(%s), __typeof__(&%s)), %s);" %
                      (m, elem, c_str(what + ": an array")), what)
            if stype:
                p.add("_Static_assert(__builtin_types_compatible_p("
                      "__typeof__(%s), struct %s), %s);" %
                      (elem, stype, c_str(what + ": struct " + stype)), what)
            else:
                p.add("_Static_assert(__builtin_classify_type(%s) == "
                      "__builtin_classify_type(0), %s);" %
                      (elem, c_str(what + ": an integer")), what)
    p.add("#pragma GCC diagnostic pop")
    p.add("")
    p.add("int main(void)")
    p.add("{")
    for name, what in consts.items():
        p.add("    put_const(%s, NEG(%s), (unsigned long long)(%s));" %
              (c_str(name), name, name), what)
    for s, fields in scan.structs.items():
        p.add('    printf("struct %s %%zu\\n", sizeof(struct %s));' % (s, s),
              "struct " + s)
        for f, kind, stype in fields:
            m = "M(%s, %s)" % (s, f)
            elem = m + "[0]" if kind == "array" else m
            neg = "0" if stype else "NEG((__typeof__(%s))-1)" % elem
            p.add("    put_field(%s, %s, offsetof(struct %s, %s), sizeof(%s), "
                  "sizeof(%s), %s);" % (c_str(s), c_str(f), s, f, m, elem,
                                        neg),
                  "struct %s field %s" % (s, f))
    p.add("    return 0;")
    p.add("}")
    return p


DIAG = re.compile(r"^(.*?):(\d+):\d+: (error|warning|note): (.*)$")


def explain(cc_output, program, src):
    """One line naming what failed to compile, from cc's diagnostics."""
    failed, current = {}, None
    for line in cc_output.splitlines():
        m = DIAG.match(line)
        if not m:
            continue
        path, lineno, kind, msg = m.groups()
        if kind == "error":
            current = [msg, None]
        if current is None:
            continue
        if current[1] is None and os.path.abspath(path) == src:
            current[1] = program.what.get(int(lineno))
            if current[1]:
                failed.setdefault(current[1], []).append(current[0])
    if not failed:
        return "the ABI probe does not compile"
    return "; ".join("%s (cc: %s)" % (what, msgs[0])
                     for what, msgs in failed.items())


def build_table(out):
    with tempfile.TemporaryDirectory(prefix="kite-abi-") as tmp:
        probe = os.path.join(tmp, "probe.c")
        with open(probe, "w") as f:
            f.write("".join('#include "%s"\n' % h for h in HEADERS))
        inputs = header_deps(probe)
        key = inputs_key(inputs)
        scan = Scan(header_text(probe, set(inputs)))
        defines = macros(probe)
    consts = {}
    for name, text in sorted(defines.items()):
        consts[name] = "%s (#define %s %s) is not an integer constant " \
            "expression" % (name, name, text)
    for name in scan.enumerators:
        consts[name] = "enumerator %s" % name
    for expr in EXPRESSIONS:
        consts[expr] = "%s is not an integer constant expression" % expr
    program = write_program(consts, scan)
    src = os.path.join(out, "kite_abi_probe.c")
    exe = os.path.join(out, "kite_abi_probe")
    with open(src, "w") as f:
        f.write(program.text())
    if os.path.exists(exe):
        os.unlink(exe)
    r = subprocess.run(cc_cmd("-o", exe, src), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, env=CC_ENV)
    if r.returncode != 0:
        raise AbiBuildError(explain(r.stdout, program, src),
                            "%s (compiled as in %s):\n%s" %
                            (" ".join(cc_cmd("-o", exe, src)), src,
                             r.stdout))
    return assemble(run([exe], "the ABI probe"), scan, key, inputs)


def assemble(output, scan, key, inputs):
    """The table from the probe's output and the scan."""
    consts, sizes, numbers = {}, {}, {}
    for line in output.splitlines():
        w = line.split()
        if w[0] == "const":
            name, value = line.split(" ", 1)[1].rsplit(" ", 1)
            consts[name] = int(value)
        elif w[0] == "struct":
            sizes[w[1]] = int(w[2])
        else:
            numbers[(w[1], w[2])] = [int(x) for x in w[3:]]
    structs = {}
    for s, members in scan.structs.items():
        fields = []
        for f, kind, stype in members:
            off, size, elem, neg = numbers[(s, f)]
            et = {"kind": "struct", "name": stype} if stype else \
                {"kind": "int", "size": elem, "signed": bool(neg)}
            t = dict(kind="array", count=size // elem, elem=et) \
                if kind == "array" else et
            fields.append({"name": f, "offset": off, "size": size,
                           "type": t})
        structs[s] = {"size": sizes[s], "fields": fields}
    return {"key": key, "inputs": inputs, "consts": consts,
            "structs": structs}


def build(out=DEFAULT_OUT, force=False):
    """Builds OUT/kite_abi.json unless it is fresh; returns its path."""
    path = os.path.join(out, TABLE)
    os.makedirs(out, exist_ok=True)
    if not force:
        try:
            with open(path) as f:
                if is_fresh(json.load(f)):
                    return path
        except (OSError, ValueError):
            pass
    try:
        table = build_table(out)
    except AbiBuildError:
        if os.path.exists(path):
            os.unlink(path)             # never leave a stale table behind
        raise
    with open(path + ".tmp", "w") as f:
        json.dump(table, f, indent=1)
    os.replace(path + ".tmp", path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--force", action="store_true",
                    help="rebuild even when the table is up to date")
    args = ap.parse_args()
    try:
        build(args.out, args.force)
    except AbiBuildError as e:
        print(e, file=sys.stderr)
        if e.details:
            print(e.details.rstrip(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
