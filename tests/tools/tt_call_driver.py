#!/usr/bin/env python3
"""tt_call through ctypes, for the tests (no pandas: the standard library only).

call(lib, command, inputs, options) -> (rc, exit_code, output bytes or None,
error line). The library: $TT_LIB, else build/libtracetool.so.
"""
import ctypes, json, os


def load(path=None):
    path = path or os.environ.get("TT_LIB") or os.path.join(
        os.path.dirname(os.environ.get("TRACETOOL", "build/tracetool")), "libtracetool.so")
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.tt_call.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                            ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                            ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
    lib.tt_call.restype = ctypes.c_int
    lib.tt_call_free.argtypes = [ctypes.c_void_p]
    lib.tt_error_last.restype = ctypes.c_void_p
    lib.tt_error_format.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    return lib


def call(lib, command, inputs, options=None):
    arr = (ctypes.c_char_p * max(1, len(inputs)))(*[s.encode() for s in inputs])
    out = ctypes.c_void_p()
    n = ctypes.c_size_t()
    code = ctypes.c_int()
    opts = None if options is None else (
        options if isinstance(options, str) else json.dumps(options)).encode()
    rc = lib.tt_call(command.encode(), arr, len(inputs), opts, ctypes.byref(out),
                     ctypes.byref(n), ctypes.byref(code))
    if rc < 0:
        buf = ctypes.create_string_buffer(2048)
        lib.tt_error_format(lib.tt_error_last(), buf, len(buf))
        return rc, code.value, None, buf.value.decode()
    data = ctypes.string_at(out.value, n.value) if n.value else b""
    lib.tt_call_free(out)
    return rc, code.value, data, ""
