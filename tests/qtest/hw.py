# SPDX-License-Identifier: GPL-2.0-or-later
"""The device ABI (include/kite/kite_hw.h) for the qtests, by name.

Everything comes from the table abi_gen.py builds with the C compiler
(out/qtest/kite_abi.json); load() must run before the test modules are
imported.

  C.KITE_REG_VERSION, K["KITE_REG_VERSION"]   macros and enumerators
  sizeof("kite_cqe"), offsetof("kite_cmd_create_qp", "sq.addr")
  pack("kite_cmd_create_qp", qp_type=..., sq=dict(addr=..., npages=1))
  unpack("kite_cqe", raw)["status"] (or .status)
  record("kite_av", dgid=...)         a complete record, as unpack gives

pack() is little-endian and zero-fills the fields it is not given. A
nested struct takes a dict (or a record) of its fields, or bytes of its
exact size; an array of bytes takes bytes of its exact length, any other
array a sequence of its exact length. A field that does not exist, a value
that does not fit its field, a wrong length and two values for overlapping
fields (members of one union) are errors.
"""

import json

import abi_gen

K = {}


class _Consts:
    """Attribute access to the constants: C.KITE_REG_VERSION."""

    def __getattr__(self, name):
        try:
            return K[name]
        except KeyError:
            raise AttributeError("no constant %s in the ABI headers" % name)


C = _Consts()
STRUCTS = {}


class AbiError(Exception):
    """A structure used in a way the header does not allow."""


class AbiTableError(Exception):
    """The generated table is missing or older than its inputs."""


def load(path):
    """Reads the table at PATH into C, K and the struct layouts."""
    try:
        with open(path) as f:
            table = json.load(f)
    except (OSError, ValueError) as e:
        raise AbiTableError("cannot read %s (%s): run tests/qtest/abi_gen.py"
                            % (path, e))
    if not abi_gen.is_fresh(table):
        raise AbiTableError("%s is older than the headers it was built from: "
                            "run tests/qtest/abi_gen.py" % path)
    K.clear()
    K.update(table["consts"])
    STRUCTS.clear()
    for name, s in table["structs"].items():
        STRUCTS[name] = Layout(name, s)


class Field:
    def __init__(self, name, offset, size, type_):
        self.name, self.offset, self.size, self.type = name, offset, size, \
            type_


class Layout:
    """One struct: its size and its fields in order."""

    def __init__(self, name, s):
        self.name = name
        self.size = s["size"]
        self.fields = dict((f["name"], Field(f["name"], f["offset"],
                                             f["size"], f["type"]))
                           for f in s["fields"])

    def field(self, name):
        try:
            return self.fields[name]
        except KeyError:
            raise AbiError("struct %s has no field %r (it has %s)" %
                           (self.name, name, ", ".join(self.fields)))


class Record(dict):
    """A decoded struct: a dict of its fields, also as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)


def layout(name):
    try:
        return STRUCTS[name]
    except KeyError:
        raise AbiError("no struct %s in the ABI header" % name)


def sizeof(name):
    return layout(name).size


def field(name, path):
    """The Field at PATH ("sq.addr": nested fields) of struct NAME, with
    its offset from the start of NAME."""
    s, off = layout(name), 0
    parts = path.split(".")
    for i, part in enumerate(parts):
        f = s.field(part)
        off += f.offset
        if i < len(parts) - 1:
            if f.type["kind"] != "struct":
                raise AbiError("%s.%s is not a struct" % (s.name, part))
            s = layout(f.type["name"])
    return Field(path, off, f.size, f.type)


def offsetof(name, path):
    return field(name, path).offset


def field_names(name):
    return list(layout(name).fields)


def _is_bytes(t):
    return t["kind"] == "array" and t["elem"]["kind"] == "int" and \
        t["elem"]["size"] == 1 and not t["elem"]["signed"]


def _type_size(t):
    if t["kind"] == "int":
        return t["size"]
    if t["kind"] == "struct":
        return sizeof(t["name"])
    return t["count"] * _type_size(t["elem"])


def _put(t, buf, off, value, where):
    kind = t["kind"]
    if kind == "int":
        if not isinstance(value, int):
            raise AbiError("%s: %r is not an integer" % (where, value))
        bits = 8 * t["size"]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if \
            t["signed"] else (0, (1 << bits) - 1)
        if not lo <= value <= hi:
            raise AbiError("%s: %#x does not fit %d bytes" %
                           (where, value, t["size"]))
        buf[off:off + t["size"]] = value.to_bytes(t["size"], "little",
                                                  signed=t["signed"])
    elif kind == "struct":
        s = layout(t["name"])
        if isinstance(value, (bytes, bytearray)):
            if len(value) != s.size:
                raise AbiError("%s: %d bytes for struct %s of %d" %
                               (where, len(value), s.name, s.size))
            buf[off:off + s.size] = value
        elif isinstance(value, dict):
            _pack_into(s, buf, off, value, where)
        else:
            raise AbiError("%s: struct %s from %r" % (where, s.name, value))
    elif _is_bytes(t):
        if not isinstance(value, (bytes, bytearray)) or \
                len(value) != t["count"]:
            raise AbiError("%s: %r is not %d bytes" %
                           (where, value, t["count"]))
        buf[off:off + t["count"]] = value
    else:
        if not isinstance(value, (list, tuple)) or \
                len(value) != t["count"]:
            raise AbiError("%s: %r is not %d values" %
                           (where, value, t["count"]))
        step = _type_size(t["elem"])
        for i, v in enumerate(value):
            _put(t["elem"], buf, off + i * step, v, "%s[%d]" % (where, i))


def _pack_into(s, buf, base, values, where):
    taken = []
    for name, value in values.items():
        f = s.field(name)
        end = f.offset + f.size
        for other, o_start, o_end in taken:
            if f.offset < o_end and o_start < end:
                raise AbiError("%s: fields %s and %s overlap" %
                               (where, other, name))
        taken.append((name, f.offset, end))
        _put(f.type, buf, base + f.offset, value, "%s.%s" % (where, name))


def pack(name, **values):
    """Struct NAME as bytes, from the values of its fields (others 0)."""
    s = layout(name)
    buf = bytearray(s.size)
    _pack_into(s, buf, 0, values, name)
    return bytes(buf)


def _get(t, raw, off):
    kind = t["kind"]
    if kind == "int":
        return int.from_bytes(raw[off:off + t["size"]], "little",
                              signed=t["signed"])
    if kind == "struct":
        return unpack(t["name"], raw, off)
    if _is_bytes(t):
        return bytes(raw[off:off + t["count"]])
    step = _type_size(t["elem"])
    return [_get(t["elem"], raw, off + i * step) for i in range(t["count"])]


def unpack(name, raw, offset=0):
    """The fields of struct NAME at RAW[OFFSET:], as a Record."""
    s = layout(name)
    if len(raw) - offset < s.size:
        raise AbiError("struct %s needs %d bytes, got %d" %
                       (name, s.size, len(raw) - offset))
    return Record((f.name, _get(f.type, raw, offset + f.offset))
                  for f in s.fields.values())


def record(name, **values):
    """The Record unpack() would give for pack(name, **values)."""
    return unpack(name, pack(name, **values))
