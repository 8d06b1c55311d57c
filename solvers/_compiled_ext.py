"""Private accelerator of :mod:`solvers.compiled`: a tiny CPython extension type.

``ctypes`` costs a few tenths of a microsecond per call, and the Python code around it
(packing arguments, copying outputs) a couple more. For the common case (dense inputs given
as Python floats or float64 1-D arrays, dense outputs) this module compiles once per
interpreter and numpy version a small extension type, ``Caller``, whose call does in C what
:mod:`solvers._compiled_call` does in Python: copy the arguments into the library's static
input buffer, call its zero-argument entry point (whose address comes from ``ctypes``), and
return fresh numpy arrays. Any argument it does not recognise hands the whole call to the
Python path (``slow``), which validates and converts, or raises the documented errors.

The accelerator is optional: setting the environment variable ``DYNABLOCKS_NO_FASTCALL``
disables it for functions built afterwards; when Python's or numpy's C headers are missing or the build
fails, :func:`caller_type` returns None and the pure ``ctypes`` path is used, silently
(the function is compiled either way).
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__: list[str] = []  # private module

_VERSION = 3
_MODNAME = "_dynablocks_fastcall"

_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

typedef int (*entry_t)(void);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    entry_t entry;
    double *in;
    const double *out;
    Py_ssize_t n_in, n_out;
    Py_ssize_t *in_size, *in_off;      /* per input: number of values, offset */
    Py_ssize_t *out_rows, *out_cols, *out_off;
    int *out_vec;                       /* per output: 1-D result (column vector) */
    PyObject *slow;                     /* Python call path: slow(*args) */
    PyObject *fail;                     /* fail(code) raises */
} Caller;

static PyObject *make_output(Caller *self, Py_ssize_t k) {
    const double *src = self->out + self->out_off[k];
    Py_ssize_t r = self->out_rows[k], c = self->out_cols[k];
    PyObject *arr;
    if (self->out_vec[k]) {
        npy_intp dims[1] = {r};
        arr = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
        if (arr) memcpy(PyArray_DATA((PyArrayObject *)arr), src, (size_t)r * sizeof(double));
    } else {
        npy_intp dims[2] = {r, c};
        arr = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
        if (arr) {  /* column-major nonzeros -> C order */
            double *dst = (double *)PyArray_DATA((PyArrayObject *)arr);
            for (Py_ssize_t j = 0; j < c; ++j)
                for (Py_ssize_t i = 0; i < r; ++i) dst[i * c + j] = src[j * r + i];
        }
    }
    return arr;
}

static PyObject *Caller_vectorcall(PyObject *obj, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    Caller *self = (Caller *)obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || nargs != self->n_in) goto slow;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        PyObject *a = args[i];
        double *dst = self->in + self->in_off[i];
        if (PyFloat_Check(a)) {  /* float, numpy.float64 */
            if (self->in_size[i] != 1) goto slow;
            *dst = PyFloat_AS_DOUBLE(a);
        } else if (PyArray_CheckExact(a)) {
            PyArrayObject *arr = (PyArrayObject *)a;
            if (PyArray_TYPE(arr) != NPY_DOUBLE || PyArray_NDIM(arr) != 1
                || PyArray_DIM(arr, 0) != self->in_size[i]
                || !PyArray_ISCARRAY_RO(arr) || PyArray_ISBYTESWAPPED(arr)) goto slow;
            memcpy(dst, PyArray_DATA(arr), (size_t)self->in_size[i] * sizeof(double));
        } else {
            goto slow;
        }
    }
    {
        int code = self->entry();
        if (code) {
            PyObject *c = PyLong_FromLong(code);
            PyObject *r = (c && self->fail) ? PyObject_CallOneArg(self->fail, c) : NULL;
            Py_XDECREF(c);
            Py_XDECREF(r);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "compiled function failed");
            return NULL;
        }
    }
    if (self->n_out == 1) return make_output(self, 0);
    {
        PyObject *tup = PyTuple_New(self->n_out);
        if (!tup) return NULL;
        for (Py_ssize_t k = 0; k < self->n_out; ++k) {
            PyObject *o = make_output(self, k);
            if (!o) { Py_DECREF(tup); return NULL; }
            PyTuple_SET_ITEM(tup, k, o);
        }
        return tup;
    }
slow:
    if (!self->slow) {
        PyErr_SetString(PyExc_RuntimeError, "compiled function was cleared");
        return NULL;
    }
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static int read_sizes(PyObject *seq, Py_ssize_t n, Py_ssize_t **dst) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "sequence has the wrong length");
        return -1;
    }
    *dst = (Py_ssize_t *)PyMem_Calloc((size_t)(n + 1), sizeof(Py_ssize_t));
    if (!*dst) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; ++i) {
        (*dst)[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(fast, i));
        if ((*dst)[i] == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
    }
    Py_DECREF(fast);
    return 0;
}

/* Caller(entry, in_addr, out_addr, in_sizes, in_offsets, out_rows, out_cols, out_offsets,
          out_is_vector, slow, fail) */
static int Caller_init(PyObject *obj, PyObject *a, PyObject *kw) {
    Caller *self = (Caller *)obj;
    unsigned long long entry, in_addr, out_addr;
    PyObject *in_sizes, *in_offs, *out_rows, *out_cols, *out_offs, *out_vec, *slow, *fail;
    if (!PyArg_ParseTuple(a, "KKKOOOOOOOO", &entry, &in_addr, &out_addr, &in_sizes, &in_offs,
                          &out_rows, &out_cols, &out_offs, &out_vec, &slow, &fail))
        return -1;
    self->n_in = PySequence_Size(in_sizes);
    self->n_out = PySequence_Size(out_rows);
    if (self->n_in < 0 || self->n_out < 1) {
        PyErr_SetString(PyExc_ValueError, "need input sizes and at least one output");
        return -1;
    }
    if (read_sizes(in_sizes, self->n_in, &self->in_size) || read_sizes(in_offs, self->n_in, &self->in_off)
        || read_sizes(out_rows, self->n_out, &self->out_rows)
        || read_sizes(out_cols, self->n_out, &self->out_cols)
        || read_sizes(out_offs, self->n_out, &self->out_off)) return -1;
    {
        Py_ssize_t *vec = NULL;
        if (read_sizes(out_vec, self->n_out, &vec)) return -1;
        self->out_vec = (int *)PyMem_Calloc((size_t)(self->n_out + 1), sizeof(int));
        if (!self->out_vec) { PyMem_Free(vec); PyErr_NoMemory(); return -1; }
        for (Py_ssize_t k = 0; k < self->n_out; ++k) self->out_vec[k] = (int)vec[k];
        PyMem_Free(vec);
    }
    self->entry = (entry_t)(uintptr_t)entry;
    self->in = (double *)(uintptr_t)in_addr;
    self->out = (const double *)(uintptr_t)out_addr;
    Py_INCREF(slow); self->slow = slow;
    Py_INCREF(fail); self->fail = fail;
    self->vectorcall = Caller_vectorcall;
    return 0;
}

/* slow and fail refer back to the owning CompiledFunction: support the cycle collector */
static int Caller_traverse(PyObject *obj, visitproc visit, void *arg) {
    Caller *self = (Caller *)obj;
    Py_VISIT(self->slow);
    Py_VISIT(self->fail);
    return 0;
}

static int Caller_clear(PyObject *obj) {
    Caller *self = (Caller *)obj;
    Py_CLEAR(self->slow);
    Py_CLEAR(self->fail);
    return 0;
}

static void Caller_dealloc(PyObject *obj) {
    Caller *self = (Caller *)obj;
    PyObject_GC_UnTrack(obj);
    Caller_clear(obj);
    PyMem_Free(self->in_size); PyMem_Free(self->in_off);
    PyMem_Free(self->out_rows); PyMem_Free(self->out_cols); PyMem_Free(self->out_off);
    PyMem_Free(self->out_vec);
    Py_TYPE(obj)->tp_free(obj);
}

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_dynablocks_fastcall.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = Caller_traverse,
    .tp_clear = Caller_clear,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = PyType_GenericNew,
    .tp_init = Caller_init,
    .tp_dealloc = Caller_dealloc,
    .tp_doc = "Fast call of a dynablocks compiled function (private).",
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_dynablocks_fastcall", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__dynablocks_fastcall(void) {
    import_array();
    if (PyType_Ready(&CallerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0) {
        Py_DECREF(&CallerType); Py_DECREF(m); return NULL;
    }
    return m;
}
"""

_STATE: dict[str, Any] = {}


def caller_type(cache_dir: Path, compiler: Sequence[str]) -> type | None:
    """The extension's ``Caller`` type, built (once) into ``cache_dir``; None if impossible."""
    if os.environ.get("DYNABLOCKS_NO_FASTCALL"):
        return None
    from solvers import _compiled_build as build
    with build.LOCK:
        if "type" not in _STATE:
            _STATE["type"] = _build_caller_type(cache_dir, compiler)
        return _STATE["type"]


def prepare_caller_type(cache_dir: Path, compiler: Sequence[str]) -> None:
    """Start building the extension in a background thread (once per process), so that an
    empty cache compiles it alongside the first function rather than after it."""
    if os.environ.get("DYNABLOCKS_NO_FASTCALL") or "type" in _STATE or "thread" in _STATE:
        return
    import threading
    t = _STATE["thread"] = threading.Thread(target=caller_type, args=(cache_dir, compiler),
                                            daemon=True, name="build fastcall extension")
    t.start()


def _build_caller_type(cache_dir: Path, compiler: Sequence[str]) -> type | None:
    from solvers import _compiled_build as build
    py_inc = sysconfig.get_paths().get("include", "")
    np_inc = np.get_include()
    if not os.path.exists(os.path.join(py_inc, "Python.h")):
        return None
    key = hashlib.sha256("\0".join(
        [str(_VERSION), sys.version, np.__version__, py_inc, np_inc, *compiler, _SOURCE]
    ).encode()).hexdigest()[:32]
    suffix = (importlib.machinery.EXTENSION_SUFFIXES or [".so"])[0]

    def load(path: Path, fresh: bool) -> type:
        def finish(lib: Any, file: Path) -> type:
            spec = importlib.util.spec_from_file_location(_MODNAME, file)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.Caller
        return build.open_library(path, key, finish, fresh_name=fresh)

    try:   # the verified loader of every compiled library (solvers._compiled_build)
        return build.cached_library(
            cache_dir, f"dbk_fastcall_{key}{suffix}", key,
            build=lambda path: build.compile_library(
                _SOURCE, path, compiler, ("-O2", f"-I{py_inc}", f"-I{np_inc}"), key),
            load=load)
    except Exception:  # optional accelerator: the ctypes path is used instead
        return None
