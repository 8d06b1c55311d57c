"""The runs of error-controlled steps of the small states' ``runge_kutta3`` (Bogacki-Shampine
3(2)) and ``RK45`` (Dormand-Prince 5(4)) in C (private to
:mod:`systems.analysis._bogacki_shampine` and :mod:`systems.analysis._dopri`).

The interpreted Simulator's derivative function is Python (the blocks' callbacks); the step
arithmetic around it need not be. :func:`native_run` and :func:`native_dopri_run` give the
same ``run(t, x, k0, t_limit, h, t_event, t_final, check)`` as the written-out Python runs
(:func:`systems.analysis._unrolled.make_run` over the bodies of those modules), their loops
in C: the stages, the solution, the error norm, the step-size control and the stops are the
Python bodies' expressions in the same order on IEEE doubles (compiled without contraction
into fused multiply-adds: ``-ffp-contract=off``, which :mod:`solvers.compiled` adds), so the
numbers are the same bits; ``pow``, ``sqrt`` and ``nextafter`` are the C library's, which
CPython's ``**``, ``math.sqrt`` and ``math.ulp`` call. The C loop calls back into Python for
every stage (the derivative function; the stage's state a read-only float64 array over a
``bytes`` object, made by numpy's C API with the flags ``np.frombuffer`` gives the Python
run's) and on the rare paths (a non-finite stage or state, a rejected step, a step below
time's resolution: the Python run's own functions, so the same errors), and hands the last
accepted step back through ``save`` whatever happens.

The library (CPython and numpy headers) is built once per machine by the project's
C-library cache (:func:`solvers.compiled.load_c_library`; its first build into an empty
cache measured 0.33-0.48 s with gcc -O2 on a 2-core machine, 0.84 s under load; from the
cache 2 ms) and loaded once per process; its runs are builtin functions (made once through
``ctypes``). Without a C compiler or Python's C headers, or when the build fails, one
:class:`~solvers.errors.CompilationWarning` per process names the reason, and the Python runs
are used (so too with ``DYNABLOCKS_NO_NATIVE_RUNS`` set to anything but ``""`` or ``"0"``,
silently): the same numbers, slower (about 2 us more per ``runge_kutta3`` step of a 4-entry
state).
"""
from __future__ import annotations

import ctypes
import os
import sys
import sysconfig
import threading
import warnings
from typing import Callable, Optional

import numpy as np

from solvers.errors import CompilationWarning
from ..errors import StepSizeError

__all__ = ["native_run", "native_dopri_run", "switched_off", "ENABLED", "MAX_ENTRIES",
           "DOPRI_CONSTANTS"]

#: Whether runs use the C loop when it can be built (tests switch it off to compare).
ENABLED = True
#: Largest state the C loop takes (its arrays are on the C stack).
MAX_ENTRIES = 16

_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#define NMAX %(NMAX)d

/* math.ulp */
static double ulp_(double x) {
    x = fabs(x);
    if (isnan(x) || isinf(x)) return x;
    double x2 = nextafter(x, INFINITY);
    if (isinf(x2)) { x2 = nextafter(x, -INFINITY); return x - x2; }
    return x2 - x;
}

/* np.frombuffer(struct.pack("nd", *v)): a read-only float64 array over a new bytes object */
static PyObject* frozen(const double* v, Py_ssize_t n) {
    PyObject* b = PyBytes_FromStringAndSize((const char*)v, n * (Py_ssize_t)sizeof(double));
    if (!b) return NULL;
    npy_intp dim = n;
    PyObject* a = PyArray_New(&PyArray_Type, 1, &dim, NPY_DOUBLE, NULL, PyBytes_AS_STRING(b),
                              0, NPY_ARRAY_CARRAY_RO, NULL);
    if (!a) { Py_DECREF(b); return NULL; }
    if (PyArray_SetBaseObject((PyArrayObject*)a, b) < 0) { Py_DECREF(a); return NULL; }
    return a;
}

static PyObject* float_list(const double* v, Py_ssize_t n) {
    PyObject* l = PyList_New(n);
    if (!l) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject* e = PyFloat_FromDouble(v[i]);
        if (!e) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, i, e);
    }
    return l;
}

/* the n floats of a sequence into v (as "v0, v1, ..., = seq" unpacks it); 0 or -1 */
static int unpack(PyObject* seq, double* v, Py_ssize_t n) {
    PyObject* fast = PySequence_Fast(seq, "cannot unpack a non-iterable derivative");
    if (!fast) return -1;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
    if (m != n) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "the derivative has %%zd values, expected %%zd", m, n);
        return -1;
    }
    PyObject** items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        double d = PyFloat_AsDouble(items[i]);
        if (d == -1.0 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        v[i] = d;
    }
    Py_DECREF(fast);
    return 0;
}

/* whether v is a tuple of exactly n Python floats */
static int float_tuple(PyObject* v, Py_ssize_t n) {
    if (!PyTuple_CheckExact(v) || PyTuple_GET_SIZE(v) != n) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyFloat_CheckExact(PyTuple_GET_ITEM(v, i))) return 0;
    return 1;
}

/* k = g(ts, xs), or take(g(ts, xs)) unless g's value is a tuple of n Python floats (new
   reference to the value, or NULL); a non-finite sum of its entries calls
   report(ts, [k...]) */
static PyObject* stage(PyObject* g, PyObject* take, PyObject* report, double ts,
                       PyObject* xs, double* k, Py_ssize_t n) {
    PyObject* tso = PyFloat_FromDouble(ts);
    if (!tso) return NULL;
    PyObject* args[2] = {tso, xs};
    PyObject* r = PyObject_Vectorcall(g, args, 2, NULL);
    if (r && take != Py_None && !float_tuple(r, n)) {
        PyObject* v = PyObject_CallOneArg(take, r);
        Py_DECREF(r);
        r = v;
    }
    if (!r || unpack(r, k, n) < 0) { Py_DECREF(tso); Py_XDECREF(r); return NULL; }
    double s = k[0];
    for (Py_ssize_t i = 1; i < n; i++) s += k[i];
    if (!isfinite(s)) {
        PyObject* l = float_list(k, n);
        PyObject* out = l ? PyObject_CallFunctionObjArgs(report, tso, l, NULL) : NULL;
        Py_XDECREF(l);
        if (!out) { Py_DECREF(tso); Py_DECREF(r); return NULL; }
        Py_DECREF(out);
    }
    Py_DECREF(tso);
    return r;
}

static int call3(PyObject* fn, PyObject* a, PyObject* b, PyObject* c) {
    PyObject* out = PyObject_CallFunctionObjArgs(fn, a, b, c, NULL);
    if (!out) return -1;
    Py_DECREF(out);
    return 0;
}

/* a run's value (t, x, k0, t_prev, x_prev, k0_prev, h, steps, the exception or None),
   taking the references xo, ko, xpo, kpo; with failed, the exception set (its traceback
   kept) */
static PyObject* finish(int failed, double t, PyObject* xo, PyObject* ko, double tp,
                        PyObject* xpo, PyObject* kpo, double hn, long steps) {
    PyObject* exc = Py_None;
    if (failed) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb && value) PyException_SetTraceback(value, tb);
        Py_XDECREF(type); Py_XDECREF(tb);
        exc = value ? value : (Py_INCREF(Py_None), Py_None);
    } else Py_INCREF(exc);
    if (steps)
        return Py_BuildValue("(dNNdNNdlN)", t, xo, ko, tp, xpo, kpo, hn, steps, exc);
    Py_XDECREF(xpo); Py_XDECREF(kpo);
    return Py_BuildValue("(dNNOOOdlN)", t, xo, ko, Py_None, Py_None, Py_None, hn, steps, exc);
}

/* the arguments of a run: (fixed, check, t, x, k0, t_limit, hn, t_event, t_final) with
   fixed = (g, take, report, rejected, step_error, nconst floats); x's and k0's n entries
   into X and P. 0, or -1 with an exception set. */
#define MAXCONST 40
typedef struct {
    PyObject *g, *take, *report, *rejected, *step_error, *check, *x, *k0;
    double t, t_limit, hn, t_event, t_final, c[MAXCONST];
    Py_ssize_t n;
} run_args;

static int parse(PyObject* const* args, Py_ssize_t nargs, Py_ssize_t nconst, run_args* a,
                 double* X, double* P) {
    if (nargs != 9 || !PyTuple_CheckExact(args[0]) ||
            PyTuple_GET_SIZE(args[0]) != 5 + nconst || nconst > MAXCONST) {
        PyErr_SetString(PyExc_TypeError, "run(fixed, check, t, x, k0, t_limit, h, t_event, "
                        "t_final) with fixed = (g, take, report, rejected, step_error, "
                        "constants...)");
        return -1;
    }
    PyObject* fixed = args[0];
    a->g = PyTuple_GET_ITEM(fixed, 0);
    a->take = PyTuple_GET_ITEM(fixed, 1);
    a->report = PyTuple_GET_ITEM(fixed, 2);
    a->rejected = PyTuple_GET_ITEM(fixed, 3);
    a->step_error = PyTuple_GET_ITEM(fixed, 4);
    /* the floats, stopping at the first that is not one (its exception set) */
    for (Py_ssize_t k = 0; k < nconst; k++) {
        a->c[k] = PyFloat_AsDouble(PyTuple_GET_ITEM(fixed, 5 + k));
        if (a->c[k] == -1.0 && PyErr_Occurred()) return -1;
    }
    double* scalars[5] = {&a->t, &a->t_limit, &a->hn, &a->t_event, &a->t_final};
    static const int at[5] = {2, 5, 6, 7, 8};
    for (int k = 0; k < 5; k++) {
        *scalars[k] = PyFloat_AsDouble(args[at[k]]);
        if (*scalars[k] == -1.0 && PyErr_Occurred()) return -1;
    }
    a->check = args[1];
    a->x = args[3];
    a->k0 = args[4];
    PyObject* x = a->x;
    /* copied as raw doubles only when they are this machine's: native byte order, aligned,
       contiguous (any other array is read entry by entry, as a sequence) */
    if (PyArray_Check(x) && PyArray_TYPE((PyArrayObject*)x) == NPY_DOUBLE &&
            PyArray_NDIM((PyArrayObject*)x) == 1 && PyArray_IS_C_CONTIGUOUS((PyArrayObject*)x) &&
            PyArray_ISNOTSWAPPED((PyArrayObject*)x) && PyArray_ISALIGNED((PyArrayObject*)x)) {
        a->n = PyArray_DIM((PyArrayObject*)x, 0);
        if (a->n >= 1 && a->n <= NMAX)
            memcpy(X, PyArray_DATA((PyArrayObject*)x), (size_t)a->n * sizeof(double));
    } else {
        a->n = PySequence_Length(x);
        if (a->n >= 1 && a->n <= NMAX && unpack(x, X, a->n) < 0) return -1;
    }
    if (a->n < 1 || a->n > NMAX) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "run: %%zd entries (1 to %%d)", a->n, NMAX);
        return -1;
    }
    return unpack(a->k0, P, a->n);
}

static PyObject* bs3_run(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    run_args a;
    double X[NMAX], P[NMAX], Q[NMAX], R[NMAX], Y[NMAX], U[NMAX], S[NMAX];
    if (parse(args, nargs, 12, &a, X, P) < 0) return NULL;
    PyObject *g = a.g, *take = a.take, *report = a.report, *check = a.check,
             *rejected = a.rejected, *step_error = a.step_error, *x = a.x, *k0 = a.k0;
    double t = a.t, t_limit = a.t_limit, hn = a.hn, t_event = a.t_event, t_final = a.t_final;
    double max_step = a.c[0], atol = a.c[1], rtol = a.c[2], stretch = a.c[3],
           exponent = a.c[4], w0 = a.c[5], w1 = a.c[6], w2 = a.c[7], w3 = a.c[8],
           a20 = a.c[9], a21 = a.c[10], a22 = a.c[11];
    Py_ssize_t n = a.n;
    PyObject *xo = x, *ko = k0, *xpo = NULL, *kpo = NULL, *xn = NULL, *kn = NULL;
    Py_INCREF(xo); Py_INCREF(ko);
    double tp = 0.0, h, t_new, norm, ts, c0, c1, c2, c3;
    long steps = 0;
    for (;;) {
        for (;;) {
            h = max_step < hn ? max_step : hn;
            double remaining = t_limit - t;
            if (remaining <= h * (1.0 + stretch)) { h = remaining; t_new = t_limit; }
            else t_new = t + h;
            c0 = h * 0.5;
            ts = t + 0.5 * h;
            for (Py_ssize_t i = 0; i < n; i++) S[i] = X[i] + c0 * P[i];
            PyObject* xs = frozen(S, n);
            if (!xs) goto fail;
            PyObject* r = stage(g, take, report, ts, xs, Q, n);
            Py_DECREF(xs);
            if (!r) goto fail;
            Py_DECREF(r);
            c0 = h * 0.75;
            ts = t + 0.75 * h;
            for (Py_ssize_t i = 0; i < n; i++) S[i] = X[i] + c0 * Q[i];
            xs = frozen(S, n);
            if (!xs) goto fail;
            r = stage(g, take, report, ts, xs, R, n);
            Py_DECREF(xs);
            if (!r) goto fail;
            Py_DECREF(r);
            c0 = h * a20; c1 = h * a21; c2 = h * a22;
            for (Py_ssize_t i = 0; i < n; i++) Y[i] = X[i] + c0 * P[i] + c1 * Q[i] + c2 * R[i];
            xn = frozen(Y, n);
            if (!xn) goto fail;
            ts = t + 1.0 * h;
            kn = stage(g, take, report, ts, xn, U, n);
            if (!kn) goto fail;
            c0 = h * w0; c1 = h * w1; c2 = h * w2; c3 = h * w3;
            double acc = 0.0;
            for (Py_ssize_t i = 0; i < n; i++) {
                double a = fabs(X[i]), b = fabs(Y[i]);
                double v = (c0 * P[i] + c1 * Q[i] + c2 * R[i] + c3 * U[i]) /
                           (atol + rtol * (a > b ? a : b));
                acc = i ? acc + v * v : v * v;
            }
            norm = sqrt(acc / (double)n);
            if (norm <= 1.0) {
                double factor = norm == 0.0 ? 5.0 : 0.9 * pow(norm, exponent);
                if (!(factor < 5.0)) factor = 5.0;
                double h_next = h * factor;
                if (t_new == t_limit && factor >= 1.0) h_next = hn > h_next ? hn : h_next;
                hn = h_next;
                break;
            }
            Py_CLEAR(xn); Py_CLEAR(kn);
            double factor = 0.2;
            if (isfinite(norm)) {
                double v = 0.9 * pow(norm, exponent);
                factor = v > 0.2 ? v : 0.2;
            }
            hn = h * factor;
            PyObject* ho = PyFloat_FromDouble(hn);
            PyObject* out = ho ? PyObject_CallOneArg(rejected, ho) : NULL;
            Py_XDECREF(ho);
            if (!out) goto fail;
            Py_DECREF(out);
            double at = fabs(t);
            if (hn < 16.0 * ulp_(at > 1.0 ? at : 1.0)) {
                PyObject *o1 = PyFloat_FromDouble(hn), *o2 = PyFloat_FromDouble(t),
                         *o3 = PyFloat_FromDouble(norm);
                int rc = (o1 && o2 && o3) ? call3(step_error, o1, o2, o3) : -1;
                Py_XDECREF(o1); Py_XDECREF(o2); Py_XDECREF(o3);
                if (rc < 0) goto fail;
            }
        }
        double sy = Y[0];
        for (Py_ssize_t i = 1; i < n; i++) sy += Y[i];
        if (!isfinite(sy)) {
            PyObject *o1 = PyFloat_FromDouble(t_new), *o3 = PyFloat_FromDouble(t);
            int rc = (o1 && o3) ? call3(check, o1, xn, o3) : -1;
            Py_XDECREF(o1); Py_XDECREF(o3);
            if (rc < 0) goto fail;
        }
        steps += 1;
        Py_XDECREF(xpo); Py_XDECREF(kpo);
        tp = t; xpo = xo; kpo = ko;
        t = t_new; xo = xn; ko = kn; xn = kn = NULL;
        for (Py_ssize_t i = 0; i < n; i++) { X[i] = Y[i]; P[i] = U[i]; }
        if (t >= t_final) break;
        double s = t > 1.0 ? t : (t < -1.0 ? -t : 1.0);
        if (t_event <= t + 1e-12 * s || (t_limit - t <= 1e-12 * s && t_limit - t <= 4.0 * ulp_(s)))
            break;
    }
    return finish(0, t, xo, ko, tp, xpo, kpo, hn, steps);
fail:
    Py_CLEAR(xn); Py_CLEAR(kn);
    return finish(1, t, xo, ko, tp, xpo, kpo, hn, steps);
}

/* the Dormand-Prince constants, in the order of _DOPRI_CONSTANTS */
enum { C1, C2, C3, C4, A10, A20, A21, A30, A31, A32, A40, A41, A42, A43, A50, A51, A52, A53,
       A54, B0, B2, B3, B4, B5, E0, E2, E3, E4, E5, E6, SAFETY, MIN_FACTOR, MAX_FACTOR,
       EXPONENT, NCONST };

/* fixed = (g, take, report, rejected, step_error, max_step, atol, rtol, the constants) */
static PyObject* dopri_run(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    run_args a;
    double X[NMAX], P[NMAX], Q[NMAX], R[NMAX], S4[NMAX], W[NMAX], Z[NMAX], Y[NMAX], U[NMAX];
    double S[NMAX];
    if (parse(args, nargs, 3 + NCONST, &a, X, P) < 0) return NULL;
    PyObject *g = a.g, *take = a.take, *report = a.report, *check = a.check,
             *rejected = a.rejected, *step_error = a.step_error, *x = a.x, *k0 = a.k0;
    double t = a.t, t_limit = a.t_limit, hn = a.hn, t_event = a.t_event, t_final = a.t_final;
    double max_step = a.c[0], atol = a.c[1], rtol = a.c[2];
    const double* K = a.c + 3;
    Py_ssize_t n = a.n;
    PyObject *xo = x, *ko = k0, *xpo = NULL, *kpo = NULL, *xn = NULL, *kn = NULL;
    Py_INCREF(xo); Py_INCREF(ko);
    double tp = 0.0, t_new, h, h_abs, norm, ts;
    long steps = 0;
    for (;;) {
        double min_step = 10.0 * fabs(nextafter(t, INFINITY) - t);
        h_abs = hn > max_step ? max_step : (hn < min_step ? min_step : hn);
        int rej = 0;
        for (;;) {
            if (!(h_abs >= min_step)) {
                PyObject *o1 = PyFloat_FromDouble(h_abs), *o2 = PyFloat_FromDouble(t),
                         *o3 = PyFloat_FromDouble(0.0);
                int rc = (o1 && o2 && o3) ? call3(step_error, o1, o2, o3) : -1;
                Py_XDECREF(o1); Py_XDECREF(o2); Py_XDECREF(o3);
                if (rc < 0) goto fail;
            }
            t_new = t + h_abs;
            if (t_new > t_limit) t_new = t_limit;
            h = t_new - t;
            h_abs = fabs(h);
            double a10 = h * K[A10];
            double a20 = h * K[A20], a21 = h * K[A21];
            double a30 = h * K[A30], a31 = h * K[A31], a32 = h * K[A32];
            double a40 = h * K[A40], a41 = h * K[A41], a42 = h * K[A42], a43 = h * K[A43];
            double a50 = h * K[A50], a51 = h * K[A51], a52 = h * K[A52], a53 = h * K[A53],
                   a54 = h * K[A54];
            PyObject *xs, *r;
#define DBK_STAGE(OUT, EXPR, TS)                                      \
            ts = (TS);                                                \
            for (Py_ssize_t i = 0; i < n; i++) S[i] = EXPR;           \
            xs = frozen(S, n);                                        \
            if (!xs) goto fail;                                       \
            r = stage(g, take, report, ts, xs, OUT, n);               \
            Py_DECREF(xs);                                            \
            if (!r) goto fail;                                        \
            Py_DECREF(r);
            DBK_STAGE(Q, X[i] + a10 * P[i], t + K[C1] * h)
            DBK_STAGE(R, X[i] + a20 * P[i] + a21 * Q[i], t + K[C2] * h)
            DBK_STAGE(S4, X[i] + a30 * P[i] + a31 * Q[i] + a32 * R[i], t + K[C3] * h)
            DBK_STAGE(W, X[i] + a40 * P[i] + a41 * Q[i] + a42 * R[i] + a43 * S4[i],
                      t + K[C4] * h)
            DBK_STAGE(Z, X[i] + a50 * P[i] + a51 * Q[i] + a52 * R[i] + a53 * S4[i]
                      + a54 * W[i], t + h)
#undef DBK_STAGE
            double b0 = h * K[B0], b2 = h * K[B2], b3 = h * K[B3], b4 = h * K[B4],
                   b5 = h * K[B5];
            for (Py_ssize_t i = 0; i < n; i++)
                Y[i] = X[i] + b0 * P[i] + b2 * R[i] + b3 * S4[i] + b4 * W[i] + b5 * Z[i];
            xn = frozen(Y, n);
            if (!xn) goto fail;
            ts = t_new;
            kn = stage(g, take, report, ts, xn, U, n);
            if (!kn) goto fail;
            double e0 = h * K[E0], e2 = h * K[E2], e3 = h * K[E3], e4 = h * K[E4],
                   e5 = h * K[E5], e6 = h * K[E6];
            double acc = 0.0;
            for (Py_ssize_t i = 0; i < n; i++) {
                double a = fabs(X[i]), b = fabs(Y[i]);
                double v = (e0 * P[i] + e2 * R[i] + e3 * S4[i] + e4 * W[i] + e5 * Z[i]
                            + e6 * U[i]) / (atol + (a > b ? a : b) * rtol);
                acc = i ? acc + v * v : v * v;
            }
            norm = sqrt(acc / (double)n);
            if (norm < 1.0) {
                double factor = norm == 0.0 ? K[MAX_FACTOR]
                                            : K[SAFETY] * pow(norm, K[EXPONENT]);
                if (!(factor < K[MAX_FACTOR])) factor = K[MAX_FACTOR];
                if (rej) factor = factor < 1.0 ? factor : 1.0;
                h_abs *= factor;
                hn = h_abs;
                break;
            }
            Py_CLEAR(xn); Py_CLEAR(kn);
            PyObject* out = PyObject_CallNoArgs(rejected);
            if (!out) goto fail;
            Py_DECREF(out);
            rej = 1;
            double factor = K[MIN_FACTOR];
            if (isfinite(norm)) {
                double v = K[SAFETY] * pow(norm, K[EXPONENT]);
                factor = v > K[MIN_FACTOR] ? v : K[MIN_FACTOR];
            }
            h_abs *= factor;
        }
        double sy = Y[0];
        for (Py_ssize_t i = 1; i < n; i++) sy += Y[i];
        if (!isfinite(sy)) {
            PyObject *o1 = PyFloat_FromDouble(t_new), *o3 = PyFloat_FromDouble(t);
            int rc = (o1 && o3) ? call3(check, o1, xn, o3) : -1;
            Py_XDECREF(o1); Py_XDECREF(o3);
            if (rc < 0) goto fail;
        }
        steps += 1;
        Py_XDECREF(xpo); Py_XDECREF(kpo);
        tp = t; xpo = xo; kpo = ko;
        t = t_new; xo = xn; ko = kn; xn = kn = NULL;
        for (Py_ssize_t i = 0; i < n; i++) { X[i] = Y[i]; P[i] = U[i]; }
        if (t >= t_final) break;
        double s = t > 1.0 ? t : (t < -1.0 ? -t : 1.0);
        if (t_event <= t + 1e-12 * s || (t_limit - t <= 1e-12 * s && t_limit - t <= 4.0 * ulp_(s)))
            break;
    }
    return finish(0, t, xo, ko, tp, xpo, kpo, hn, steps);
fail:
    Py_CLEAR(xn); Py_CLEAR(kn);
    return finish(1, t, xo, ko, tp, xpo, kpo, hn, steps);
}

/* the two runs as builtin functions (called from Python like any builtin, without ctypes'
   per-call cost); made once through ctypes */
static PyMethodDef dbk_defs[] = {
    {"bs3_run", (PyCFunction)(void (*)(void))bs3_run, METH_FASTCALL,
     "runge_kutta3 runs (systems.analysis._native_runs)"},
    {"dopri_run", (PyCFunction)(void (*)(void))dopri_run, METH_FASTCALL,
     "RK45 runs (systems.analysis._native_runs)"},
    {NULL, NULL, 0, NULL}};

PyObject* dbk_native_functions(PyObject* unused) {
    if (_import_array() < 0) return NULL;
    return Py_BuildValue("(NN)", PyCFunction_New(&dbk_defs[0], NULL),
                         PyCFunction_New(&dbk_defs[1], NULL));
}
""" % {"NMAX": MAX_ENTRIES}

_A20, _A21, _A22 = 2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0
_KERNELS: dict = {}   # {"bs3": C function, "dopri": C function} or {} when none, per process


_LOCK = threading.Lock()


def _kernel(name: str = "bs3") -> Optional[Callable]:
    """The compiled run ``name`` (``"bs3"`` or ``"dopri"``, a builtin function of the
    library), or None when switched off (:func:`switched_off`), without a compiler or
    Python's C headers, or when the build fails (the last three warned once per process)."""
    if not _KERNELS:
        with _LOCK:
            if not _KERNELS:
                _KERNELS.update(_build() or {"none": None})
    return _KERNELS.get(name)


def _build() -> Optional[dict]:
    from solvers import compiled
    include = sysconfig.get_paths().get("include", "")
    if switched_off():
        return None
    cc, header = compiled.find_compiler(), os.path.join(include, "Python.h")
    if cc is None or not os.path.exists(header):   # warned once: _kernel keeps the outcome
        _python_loops_notice("no C compiler was found" if cc is None else
                             f"Python's C headers are missing ({header}; e.g. python3-dev)")
        return None
    # the interpreter's and numpy's versions in the source: a new one builds its library
    source = f"/* CPython {sys.version}, numpy {np.__version__} */\n" + _SOURCE
    flags = ("-O2", f"-I{include}", f"-I{np.get_include()}")
    try:
        lib = compiled.load_c_library(source, "dbk_native_runs", flags=flags)
        # one ctypes call (holding the GIL) for the builtin functions of the two runs
        functions = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(
            ctypes.cast(lib.dbk_native_functions, ctypes.c_void_p).value)(None)
        return dict(zip(("bs3", "dopri"), functions))
    except Exception as exc:  # noqa: BLE001 - any build failure: the Python runs
        _python_loops_notice(f"it could not be built ({type(exc).__name__}: {exc})")
        return None


def _python_loops_notice(reason: str) -> None:
    """The one warning per process that the interpreted runs use their Python loops."""
    warnings.warn(f"Simulator: the C loop of the interpreted runge_kutta3 and RK45 runs "
                  f"(systems.analysis._native_runs) is not used: {reason}; their Python loops "
                  f"run instead (the same numbers, slower)", CompilationWarning, stacklevel=3)


def switched_off() -> bool:
    """Whether the environment variable ``DYNABLOCKS_NO_NATIVE_RUNS`` switches the C loop
    off: any value but ``""`` and ``"0"`` (unset, empty and ``"0"`` leave it on)."""
    return os.environ.get("DYNABLOCKS_NO_NATIVE_RUNS", "") not in ("", "0")


def _wrapped(kernel, save, fixed: tuple) -> Callable:
    """``run(t, x, k0, t_limit, h, t_event, t_final, check)`` calling ``kernel(fixed, check,
    t, ...)``, its last accepted step handed to ``save`` whatever happened."""
    def run(t, x, k0, t_limit, hn, t_event, t_final, check):
        t, x, k0, tp, xp, kp, hn, steps, exc = kernel(fixed, check, t, x, k0, t_limit, hn,
                                                      t_event, t_final)
        save(t, x, k0, tp, xp, kp, hn, steps)
        if exc is not None:
            raise exc
    return run


def native_run(n: int, g, report, rejected, save, *, error_weights, exponent: float,
               max_step: float, atol: float, rtol: float, stretch: float,
               name: str, take=None) -> Optional[Callable]:
    """``run(t, x, k0, t_limit, h, t_event, t_final, check)`` of the ``runge_kutta3`` C loop
    for a state of ``n`` entries, or None when it is switched off (:data:`ENABLED`), ``n``
    is out of its range or it cannot be built.

    Parameters are those of :func:`systems.analysis._bogacki_shampine.unrolled_run`, but
    ``g`` (the derivative function without its finiteness check, ``g(t, x) -> n`` floats)
    and ``report`` (``report(t, values)``: the check, on values found not finite) come
    apart. With ``take``, ``g`` is the derivative function's call alone and
    ``take(value)`` makes the n floats of what it returned unless that is a tuple of exactly
    ``n`` Python floats (tested in C: the list form's ``raw`` pair, see
    :mod:`systems.analysis._derivatives`).
    """
    kernel = _kernel("bs3") if ENABLED and 0 < n <= MAX_ENTRIES else None
    if kernel is None:
        return None

    def step_error(hn, t, norm):
        raise StepSizeError(f'{name}: step size {hn:.3g} s fell below the '
                            f'resolution of time at t={t!r} (error norm {norm:.3g})')
    return _wrapped(kernel, save, (g, take, report, rejected, step_error, *map(float, (
        max_step, atol, rtol, stretch, exponent, *error_weights, _A20, _A21, _A22))))


def native_dopri_run(n: int, g, report, rejected, save, *, max_step: float, atol: float,
                     rtol: float, constants: dict, take=None) -> Optional[Callable]:
    """The ``RK45`` C loop (the body of :mod:`systems.analysis._dopri`), as
    :func:`native_run`: ``rejected()`` after each rejected try, ``constants`` the body's
    (``C1`` .. ``EXPONENT``, :data:`DOPRI_CONSTANTS`)."""
    kernel = _kernel("dopri") if ENABLED and 0 < n <= MAX_ENTRIES else None
    if kernel is None:
        return None

    def step_error(h_abs, t, _):
        raise StepSizeError(f'RK45: step size {h_abs:.3g} s fell below the resolution '
                            f'of time at t={t!r} (or the derivative is not finite)')
    return _wrapped(kernel, save, (g, take, report, rejected, step_error, *map(float, (
        max_step, atol, rtol, *(constants[k] for k in DOPRI_CONSTANTS)))))


#: The names of the Dormand-Prince constants, in the order the C loop takes them.
DOPRI_CONSTANTS = ("C1", "C2", "C3", "C4", "A10", "A20", "A21", "A30", "A31", "A32", "A40",
                   "A41", "A42", "A43", "A50", "A51", "A52", "A53", "A54", "B0", "B2", "B3",
                   "B4", "B5", "E0", "E2", "E3", "E4", "E5", "E6", "SAFETY", "MIN_FACTOR",
                   "MAX_FACTOR", "EXPONENT")
