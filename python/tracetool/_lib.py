"""Loading libtracetool.so and calling tt_call (include/tracetool/call.h).

The library is looked for, first found wins:

1. $TRACETOOL_LIB (a path to the library; an error if it does not load);
2. next to this package (tracetool/libtracetool.so, where a packager copies it);
3. the build tree of the checkout this package is in (build/libtracetool.so,
   when run from the repository with PYTHONPATH=python);
4. the library directory beside the `tracetool` found on PATH (bin/../lib,
   where `cmake --install` puts both), and sys.prefix/lib;
5. the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig's cache).

Nothing here starts a process (no ctypes.util.find_library: it runs ldconfig
and gcc). ctypes releases the GIL for the length of each foreign call, so
other Python threads run while an analysis reads its trace.
"""
import ctypes
import json
import os
import shutil
import sys
import threading

LIB_NAME = "libtracetool.so"
EXIT_USAGE = 2
EXIT_IO = 4


class Error(Exception):
    """tracetool.Error: a tracetool failure: .message is the CLI's one line, .exit_code the
    exit code the CLI gives for it (2 usage, 3 bad input, 4 I/O, ...)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self):
        return self.message

    def __repr__(self):
        return "tracetool.Error(%r, exit_code=%d)" % (self.message, self.exit_code)


Error.__module__ = "tracetool"


class _TtError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 512),
                ("source", ctypes.c_char * 512), ("offset", ctypes.c_int64)]


_lock = threading.Lock()
_lib = None


def candidates():
    """Where the library is looked for, in order (after $TRACETOOL_LIB)."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, LIB_NAME),
           os.path.join(os.path.dirname(os.path.dirname(here)), "build", LIB_NAME)]
    exe = shutil.which("tracetool")
    if exe:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
        out += [os.path.join(prefix, "lib", LIB_NAME),
                os.path.join(prefix, "lib", sys.implementation._multiarch, LIB_NAME)
                if getattr(sys.implementation, "_multiarch", None) else None]
    out.append(os.path.join(sys.prefix, "lib", LIB_NAME))
    seen = []
    for c in out:
        if c and c not in seen:
            seen.append(c)
    return seen


def _bind(lib, path):
    try:
        lib.tt_call.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
        lib.tt_call.restype = ctypes.c_int
        lib.tt_call_free.argtypes = [ctypes.c_void_p]
        lib.tt_call_free.restype = None
        lib.tt_error_last.argtypes = []
        lib.tt_error_last.restype = ctypes.POINTER(_TtError)
        lib.tt_error_format.argtypes = [ctypes.POINTER(_TtError), ctypes.c_char_p, ctypes.c_size_t]
        lib.tt_error_format.restype = None
        lib.tt_version.argtypes = []
        lib.tt_version.restype = ctypes.c_char_p
    except AttributeError as e:
        raise Error("%s: not a libtracetool with tt_call (%s); rebuild it (cmake --build build "
                    "--target tracetool_shared)" % (path, e), EXIT_IO) from None
    lib._tt_path = path
    return lib


def load():
    """The loaded library (loaded once); tracetool.Error when none is found."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        env = os.environ.get("TRACETOOL_LIB")
        if env:
            try:
                _lib = _bind(ctypes.CDLL(env), env)
            except OSError as e:
                raise Error("TRACETOOL_LIB=%s: cannot load it (%s)" % (env, e), EXIT_IO) from None
            return _lib
        tried = candidates()
        for c in tried:
            if os.path.exists(c):
                try:
                    _lib = _bind(ctypes.CDLL(c), c)
                    return _lib
                except OSError:
                    continue
        try:
            _lib = _bind(ctypes.CDLL(LIB_NAME), LIB_NAME)
            return _lib
        except OSError:
            pass
        raise Error("tracetool: libtracetool.so not found (tried %s and the loader's path); set TRACETOOL_LIB "
                    "to it, or build it: cmake --build build --target tracetool_shared"
                    % ", ".join(tried), EXIT_IO)


def path():
    """The path libtracetool was loaded from."""
    return load()._tt_path


def version():
    return load().tt_version().decode()


def _fs(v):
    return os.fsencode(v) if not isinstance(v, bytes) else v


def _option(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_option(x) for x in v]
    if hasattr(v, "__fspath__"):
        return os.fsdecode(os.fspath(v))
    raise Error("an option value must be a bool, number, string, path or list: %r" % (v,), EXIT_USAGE)


def options_json(options):
    """The options as call.h takes them: None and False are left out (an
    option not given), True is a flag, a list an option given several times."""
    return json.dumps({k: _option(v) for k, v in options.items() if v is not None and v is not False})


def call(command, inputs, options):
    """(the JSON text tt_call returns, the CLI's exit code for it);
    tracetool.Error with the CLI's message and exit code on failure."""
    lib = load()
    ins = [_fs(os.fspath(i)) for i in inputs]
    arr = (ctypes.c_char_p * max(len(ins), 1))(*ins)
    out = ctypes.c_void_p()
    n = ctypes.c_size_t()
    code = ctypes.c_int()
    rc = lib.tt_call(command.encode(), arr, len(ins), options_json(options).encode(),
                     ctypes.byref(out), ctypes.byref(n), ctypes.byref(code))
    if rc < 0:
        # tt_error_last is per thread: this one made the call
        buf = ctypes.create_string_buffer(2048)
        lib.tt_error_format(lib.tt_error_last(), buf, len(buf))
        lib.tt_call_free(out)
        # the line the CLI prints on stderr: "tracetool: FILE: byte N: problem"
        raise Error("tracetool: " + buf.value.decode("utf-8", "replace"), code.value or 70)
    try:
        text = ctypes.string_at(out, n.value)
    finally:
        lib.tt_call_free(out)
    return text, code.value
