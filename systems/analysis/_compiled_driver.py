"""The C driver of a compiled whole run (private part of :mod:`systems.analysis.compiled`).

One shared library per diagram holds the CasADi-generated C code of three functions and a
hand-written loop calling them with the plant's contact kernel:

* ``stage(t, xd, u, p) -> (tau, xd_next)``: the rest of the diagram at the start of a step
  (controllers and sources: the plant's actuation ``tau``; every other block's periodic
  discrete update, the plant's own entries of ``xd_next`` left as they are);
* ``dyn(q, v) -> (H, c, P, S)``: the plant's dynamics function (the plant's own compiled
  call runs the same generated code);
* ``log(t, xd, u, p) -> y``: the inputs of every log sink, concatenated;
* with loop closures (the protocol's ``closures``): ``elim`` (the closures' elimination,
  before the kernel: its ``cproj``, ``cpv`` into the kernel's input) and ``proj`` (their
  post-stabilization of the kernel's ``q_next``, when the plant has it), the plant's own
  functions, called in the order of the plant's step.

``dbwr_run(ints, ptrs)`` runs segments ``[s0, n)`` of a schedule (per segment: start and end
time, and flags: bit 0 an update at the start, bit 1 a log sample at the end) for each world
``w`` of a batch: at an update it evaluates ``stage`` and ``dyn``, scatters ``H, c, P, S`` into
the kernel's input sections, evaluates the closures' elimination (if any), calls the kernel
through its entry address, projects the closures (if asked), and commits the
plant's ``[q_next; v_next]``, the other blocks' updates and the kernel's warm start out; at a
sample it evaluates ``log`` into the world's log buffer. A world stops at the first segment
whose step the kernel rejects (``status = (code, segment)``: 1 singular velocity block, 2 not
converged, 3 non-finite state, 4 an evaluation error, 5 dependent closure rows: the plant's
step takes its numpy path); the caller takes that step in Python and resumes. Each world's
row of ``kin`` is the kernel's input followed by the closures' data (``NCD`` doubles).
"""
from __future__ import annotations

import copy
import ctypes

import casadi as ca
import numpy as np

from solvers import compiled as _compiled
from solvers import ops

__all__: list[str] = []  # private module

STATUS_TEXT = {1: "a velocity block of H + h D is not positive definite",
               2: "the contact kernel did not converge",
               3: "a state became NaN or infinite",
               4: "a generated function failed to evaluate",
               5: "the loop closures' rows are dependent (the plant's step takes its numpy "
                  "elimination or projection)"}


def _renamed(fun: ca.Function, name: str) -> ca.Function:
    """``fun`` under the C name ``name`` (rebuilt on its own symbols, as the plant's
    compiled call rebuilds it, so the generated arithmetic is the same)."""
    if fun.is_a("SXFunction"):
        args = fun.sx_in()
    else:
        args = fun.mx_in()
    return ca.Function(name, args, fun.call(args), fun.name_in(), fun.name_out())


def _dense_positions(fun: ca.Function, sections: list) -> np.ndarray:
    """For each nonzero of each output of ``fun`` (in CasADi's order), its index in the
    kernel's input buffer: output ``i`` is stored row-major (C order) at ``sections[i]``."""
    pos = []
    for i, start in enumerate(sections):
        sp = fun.sparsity_out(i)
        rows, cols = sp.get_triplet()
        ncol = sp.size2()
        pos.extend(start + r * ncol + c for r, c in zip(rows, cols))
    return np.array(pos, dtype=np.int64)


def _c_array(name: str, ctype: str, values) -> str:
    vals = ", ".join(str(int(v)) for v in values) or "0"
    return f"static const {ctype} {name}[] = {{{vals}}};"


_LOOP = r"""
typedef int (*dbwr_kernel_fn)(const int*, const double*, const double*, double*, double*, int*);

static int dbwr_work_max(casadi_int* a, casadi_int* r, casadi_int* iw, casadi_int* w) {
  casadi_int sa, sr, si, sw;
  int (*works[NFUN])(casadi_int*, casadi_int*, casadi_int*, casadi_int*) = {WORKS};
  int k;
  *a = *r = *iw = *w = 0;
  for (k = 0; k < NFUN; ++k) {
    if (works[k](&sa, &sr, &si, &sw)) return 1;
    if (sa > *a) *a = sa;
    if (sr > *r) *r = sr;
    if (si > *iw) *iw = si;
    if (sw > *w) *w = sw;
  }
  return 0;
}

CASADI_SYMBOL_EXPORT int P_run(const long long* ints, void** ptrs) {
  const long long n_worlds = ints[0], n_seg = ints[1], s_start = ints[2], skip_first = ints[3];
  const long long col_start = ints[4], n_cols = ints[5];
  const double* seg_t0 = (const double*) ptrs[0];
  const double* seg_t1 = (const double*) ptrs[1];
  const int* seg_flags = (const int*) ptrs[2];
  const int* it = (const int*) ptrs[3];
  const double* dt = (const double*) ptrs[4];
  dbwr_kernel_fn kernel = (dbwr_kernel_fn) ptrs[5];
  double* xd_all = (double*) ptrs[6];
  const double* u_all = (const double*) ptrs[7];
  const double* p_all = (const double*) ptrs[8];
  double* kin_all = (double*) ptrs[9];
  double* log_all = (double*) ptrs[10];
  long long* status = (long long*) ptrs[11];
  casadi_int sz_arg, sz_res, sz_iw, sz_w;
  const casadi_real** arg; casadi_real** res; casadi_int* iw; casadi_real* w;
  double *kout, *kwork, *tau, *xdn, *dyn, *cl;
  int* kiwork;
  long long wd, s, k;
  if (dbwr_work_max(&sz_arg, &sz_res, &sz_iw, &sz_w)) return 1;
  arg = (const casadi_real**) calloc(sz_arg + 8, sizeof(casadi_real*));
  res = (casadi_real**) calloc(sz_res + 8, sizeof(casadi_real*));
  iw = (casadi_int*) calloc(sz_iw + 1, sizeof(casadi_int));
  w = (casadi_real*) calloc(sz_w + 1, sizeof(casadi_real));
  kout = (double*) calloc(NOUT + 1, sizeof(double));
  kwork = (double*) calloc(NWORK + 1, sizeof(double));
  kiwork = (int*) calloc(NIWORK + 1, sizeof(int));
  tau = (double*) calloc(NV + 1, sizeof(double));
  xdn = (double*) calloc(NXD + 1, sizeof(double));
  dyn = (double*) calloc(NDYN + 1, sizeof(double));
  cl = (double*) calloc(NCL + 1, sizeof(double));
  if (!arg || !res || !iw || !w || !kout || !kwork || !kiwork || !tau || !xdn || !dyn || !cl) {
    free(arg); free(res); free(iw); free(w); free(kout); free(kwork); free(kiwork);
    free(tau); free(xdn); free(dyn); free(cl);
    return 2;
  }
  for (wd = 0; wd < n_worlds; ++wd) {
    double* xd = xd_all + wd * NXD;
    const double* u = u_all + wd * NU;
    const double* p = p_all + wd * NP;
    double* kin = kin_all + wd * NKIN;
    const double* cd = kin + NIN;
    double* lg = log_all + wd * NLOG * n_cols;
    long long col = col_start, code = 0;
    for (s = s_start; s < n_seg; ++s) {
      const int fl = seg_flags[s];
      if ((fl & 1) && !(s == s_start && skip_first)) {
        double t0 = seg_t0[s];
        arg[0] = &t0; arg[1] = xd; arg[2] = u; arg[3] = p;
        res[0] = tau; res[1] = xdn;
        if (P_stage(arg, res, iw, w, 0)) { code = 4; break; }
        arg[0] = xd + PLANT_OFF; arg[1] = xd + PLANT_OFF + NQ;
        res[0] = dyn + DYN_O0; res[1] = dyn + DYN_O1; res[2] = dyn + DYN_O2;
        res[3] = dyn + DYN_O3;
        if (P_dyn(arg, res, iw, w, 0)) { code = 4; break; }
        for (k = 0; k < NDYN; ++k) kin[DYN_POS[k]] = dyn[k];
        memcpy(kin + IN_Q, xd + PLANT_OFF, (NQ + NV) * sizeof(double));
        memcpy(kin + IN_TAU, tau, NV * sizeof(double));
#if HAS_ELIM
        arg[0] = xd + PLANT_OFF; arg[1] = kin + IN_H; arg[2] = cd + CD_D;
        arg[3] = xd + PLANT_OFF + NQ; arg[4] = cd + CD_H; arg[5] = kin + IN_TAU;
        arg[6] = kin + IN_C; arg[7] = cd + CD_ERP; arg[8] = cd + CD_CFM;
        res[0] = cl;
        if (P_elim(arg, res, iw, w, 0)) { code = 4; break; }
        if (cl[EL_BAD] != 0.0) { code = 5; break; }
        memcpy(kin + IN_CPROJ, cl + EL_CPROJ, NV * NV * sizeof(double));
        memcpy(kin + IN_CPV, cl + EL_CPV, NV * sizeof(double));
#endif
        if (kernel(it, dt, kin, kout, kwork, kiwork)) { code = 1; break; }
        if (kout[OUT_STAT + ST_CONVERGED] != 1.0) { code = 2; break; }
#if HAS_PROJ
        arg[0] = kout + OUT_QN; arg[1] = kin + IN_H; arg[2] = cd + CD_D;
        arg[3] = cd + CD_RIGID;
        res[0] = cl;
        if (P_proj(arg, res, iw, w, 0)) { code = 4; break; }
        if (cl[NQ] != 0.0) { code = 5; break; }
        memcpy(kout + OUT_QN, cl, NQ * sizeof(double));
#endif
        memcpy(xd, xdn, NXD * sizeof(double));
        memcpy(xd + PLANT_OFF, kout + OUT_QN, (NQ + NV) * sizeof(double));
        memcpy(kin + IN_WARM, kout + OUT_WOUT, NWARM * sizeof(double));
        for (k = 0; k < NXD; ++k) if (!isfinite(xd[k])) { code = 3; break; }
        if (code) break;
      }
      if (fl & 2) {
        double t1 = seg_t1[s];
        arg[0] = &t1; arg[1] = xd; arg[2] = u; arg[3] = p;
        res[0] = lg + col * NLOG;
        if (NLOG && P_log(arg, res, iw, w, 0)) { code = 4; break; }
        ++col;
      }
    }
    status[2 * wd] = code;
    status[2 * wd + 1] = s;
  }
  free(arg); free(res); free(iw); free(w); free(kout); free(kwork); free(kiwork);
  free(tau); free(xdn); free(dyn); free(cl);
  return 0;
}
"""


class Driver:
    """The compiled library of one diagram's whole run (module docstring).

    Parameters
    ----------
    stage, log : casadi.Function
        ``(t, xd, u, p) -> (tau, xd_next)`` and ``(t, xd, u, p) -> y`` (dense outputs).
    proto : CompiledStepProtocol-like
        The plant's compiled step (``dynamics``, ``kernel_address``, tables, sections).
    plant_offset : int
        Offset of the plant's ``[q; v]`` in the diagram's discrete state.
    sizes : dict
        ``nxd, nu, np, nlog``.
    flags : sequence of str, optional
        Compiler flags of the library (default :func:`solvers.compiled.auto_flags` of its
        source: ``-O0`` for the long straight-line code of a many-body diagram).
    """

    @staticmethod
    def layout_of(proto) -> tuple:
        """What the generated loop bakes in from a plant's compiled step: sizes, sections
        and the dynamics function (a driver serves any plant with the same layout)."""
        cl = getattr(proto, "closures", None)
        closures = None if cl is None else (
            id(cl.elimination), id(cl.projection), cl.cproj, cl.cpv, cl.bad, cl.n_out,
            tuple(sorted(cl.data_sections.items())))
        return (proto.nq, proto.nv, proto.n_in, proto.n_out, proto.n_work, proto.n_iwork,
                proto.status_converged, tuple(sorted(proto.input_sections.items())),
                tuple(sorted(proto.output_sections.items())), id(proto.dynamics), closures)

    def with_proto(self, proto) -> "Driver":
        """This driver (the same loaded library) running ``proto``'s kernel and tables."""
        twin = copy.copy(self)
        twin.proto = proto
        return twin

    def __init__(self, stage: ca.Function, log: ca.Function, proto, plant_offset: int,
                 sizes: dict, name: str, flags=None) -> None:
        self.proto = proto
        self.layout = self.layout_of(proto)
        self._dynamics = proto.dynamics  # keeps the id in the layout valid
        cl = getattr(proto, "closures", None)
        self._closures = cl              # (its functions' ids too)
        self.n_closure_data = 0 if cl is None else cl.n_data
        self.sizes = sizes
        dyn = proto.dynamics
        ins, outs = proto.input_sections, proto.output_sections
        if ins["v"][0] != ins["q"][1] or outs["vn"][0] != outs["qn"][1]:
            raise ValueError("the kernel's layout must hold q and v (q_next and v_next) "
                             "next to each other")
        pos = _dense_positions(dyn, [ins[k][0] for k in ("H", "c", "P", "S")])
        nnz = [dyn.sparsity_out(i).nnz() for i in range(4)]
        prefix = ops.function_name("dbwr", name)
        gen = ca.CodeGenerator("dbwr.c", {"with_header": False, "verbose": False})
        funs = [(stage, "stage"), (dyn, "dyn"), (log, "log")]
        if cl is not None:
            funs.append((cl.elimination, "elim"))
            if cl.projection is not None:
                funs.append((cl.projection, "proj"))
        for f, nm in funs:
            gen.add(_renamed(f, f"{prefix}_{nm}"))
        macros = dict(NXD=sizes["nxd"], NU=sizes["nu"], NP=sizes["np"], NLOG=sizes["nlog"],
                      NQ=proto.nq, NV=proto.nv, PLANT_OFF=plant_offset, NIN=proto.n_in,
                      NOUT=proto.n_out, NWORK=proto.n_work, NIWORK=proto.n_iwork,
                      IN_Q=ins["q"][0], IN_TAU=ins["tau"][0], IN_WARM=ins["warm"][0],
                      NWARM=ins["warm"][1] - ins["warm"][0], OUT_QN=outs["qn"][0],
                      OUT_STAT=outs["stat"][0], OUT_WOUT=outs["wout"][0],
                      ST_CONVERGED=proto.status_converged, NDYN=sum(nnz),
                      DYN_O0=0, DYN_O1=nnz[0], DYN_O2=nnz[0] + nnz[1],
                      DYN_O3=nnz[0] + nnz[1] + nnz[2], NFUN=len(funs),
                      WORKS=", ".join(f"{prefix}_{nm}_work" for _, nm in funs),
                      NKIN=proto.n_in + self.n_closure_data, HAS_ELIM=int(cl is not None),
                      HAS_PROJ=int(cl is not None and cl.projection is not None),
                      NCL=1 if cl is None else max(cl.n_out, proto.nq + 1))
        if cl is not None:
            ds = cl.data_sections
            macros.update(IN_H=ins["H"][0], IN_C=ins["c"][0], IN_CPROJ=ins["cproj"][0],
                          IN_CPV=ins["cpv"][0], EL_CPROJ=cl.cproj[0], EL_CPV=cl.cpv[0],
                          EL_BAD=cl.bad, CD_D=ds["d"][0], CD_H=ds["h"][0],
                          CD_ERP=ds["erp_h"][0], CD_CFM=ds["cfm_h"][0],
                          CD_RIGID=ds["rigid"][0])
            if ins["cproj"][1] - ins["cproj"][0] != proto.nv * proto.nv:
                raise ValueError("the kernel's cproj section must hold nv x nv entries")
        if ins["warm"][1] - ins["warm"][0] != outs["wout"][1] - outs["wout"][0]:
            raise ValueError("the kernel's warm start in and out differ in size")
        head = "\n".join(["#include <string.h>", "#include <math.h>", "#include <stdlib.h>"]
                         + [f"#define {k} {v}" for k, v in macros.items()]
                         + [_c_array("DYN_POS", "long long", pos)])
        loop = _LOOP.replace("P_", f"{prefix}_")
        self.source = gen.dump() + "\n" + head + "\n" + loop
        self.flags = tuple(flags) if flags is not None else _compiled.auto_flags(self.source)
        """The compiler flags the library was built with."""
        self.library = _compiled.load_c_library(self.source, prefix, flags=self.flags)
        fn = getattr(self.library, f"{prefix}_run")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        fn.restype = ctypes.c_int
        self._fn = fn

    def run(self, seg_t0: np.ndarray, seg_t1: np.ndarray, seg_flags: np.ndarray,
            xd: np.ndarray, u: np.ndarray, p: np.ndarray, kin: np.ndarray, logs: np.ndarray,
            s_start: int = 0, skip_first: bool = False, col_start: int = 0) -> np.ndarray:
        """Run segments ``[s_start, n)`` for every world (rows of ``xd, u, p, kin``; ``logs``
        of shape ``(worlds, n_cols, nlog)``), in place; returns ``status`` (worlds, 2)."""
        n_worlds = xd.shape[0]
        if kin.shape[1] != self.proto.n_in + self.n_closure_data:
            raise ValueError(f"compiled whole run: kin rows hold {kin.shape[1]} values, the "
                             f"kernel's input and the closures' data "
                             f"{self.proto.n_in + self.n_closure_data}")
        status = np.zeros((n_worlds, 2), dtype=np.int64)
        ints = np.array([n_worlds, seg_t0.shape[0], s_start, int(skip_first), col_start,
                         logs.shape[1]], dtype=np.int64)
        arrays = (seg_t0, seg_t1, seg_flags, self.proto.it, self.proto.dt, None, xd, u, p,
                  kin, logs, status)
        for a in arrays:
            if a is not None and not a.flags.c_contiguous:
                raise ValueError("compiled whole run: buffers must be C-contiguous")
        ptrs = (ctypes.c_void_p * len(arrays))(*[
            self.proto.kernel_address if a is None else a.ctypes.data for a in arrays])
        rc = self._fn(ints.ctypes.data, ctypes.addressof(ptrs))
        if rc:
            raise MemoryError(f"compiled whole run: the driver could not allocate its work "
                              f"buffers (code {rc})")
        return status
