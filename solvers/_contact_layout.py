"""The data layout of the compiled contact step, declared once (private part of
:mod:`solvers.contact_step`).

Everything the C kernel (:mod:`solvers._contact_step_source`), its numpy twin
(:mod:`solvers._contact_step_numpy`) and the table writer of the plant
(``multibody.plants._ts_tables``) agree on is described here, by name:

* fixed-size records (:class:`Record`): the header of the int table, the per-step scalars,
  a candidate's ints and doubles, a contact's outputs, the status, the warm start of a
  contact, the entries of the sub-tables (velocity blocks, joints, free joints, column
  lists, ancestor lists), a body pose of the dynamics function and a point of the narrow
  phase;
* candidate kinds (:class:`CandidateKind`): a kind is one entry of :data:`CANDIDATE_KINDS`
  (code, its own int and double fields). ``shape_pair``: a geometry pair, any pair of
  shapes of the narrow phase of :mod:`solvers.collision`, whose C text is compiled into the
  kernel (one library): each step it gives the pair's contact points at the current poses,
  up to the candidate's number of contact slots (:func:`contact_slots`); ``joint_limit``:
  one side of a joint limit, one slot with one unilateral row; ``joint_friction``: one
  velocity coordinate of a joint-friction block, one slot with one box row;
* the buffers' sections (:class:`Sections`): the input, output and work arrays as
  consecutive named sections whose sizes are products of the dimensions ``nq``, ``nv``,
  ``nb`` (bodies), ``nc`` (contact slots) and record sizes.

:func:`c_declarations` generates the C ``enum`` of every record and kind and one macro per
buffer declaring its section pointers; the C source includes that text (so the C code uses
the names, never bare offsets), and the kernel's cache key (the source's hash) changes with
the layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence, Union

from ._collision_source import CAPACITY, CONTACT_DOUBLES, CONTACT_FIELDS, MAX_CONTACTS, NPAR

__all__: list[str] = []  # private module

Factor = Union[int, str, "Record"]


class Record:
    """Named fields of a fixed-size record: ``REC.NAME`` is a field's offset (upper case),
    :meth:`slice` its range, :attr:`size` the record's length.

    Parameters
    ----------
    prefix : str
        Prefix of the generated C names (``PREFIX_NAME``; ``PREFIX_SIZE`` the size).
    fields : sequence of (str, int)
        Field names (lower case) and lengths, in storage order.
    start : int
        Offset of the first field (a kind's fields follow the common ones).
    """

    def __init__(self, prefix: str, fields: Sequence[tuple], start: int = 0) -> None:
        self.prefix = prefix
        self.fields = tuple((str(n), int(k)) for n, k in fields)
        if any(n == "size" for n, _ in self.fields):
            raise ValueError(f"record {prefix}: 'size' names the record's length, not a field")
        self.offsets: dict = {}
        off = start
        for name, n in self.fields:
            self.offsets[name] = off
            setattr(self, name.upper(), off)
            off += n
        self.size = off

    def slice(self, name: str) -> slice:
        """The range of field ``name``."""
        a = self.offsets[name]
        return slice(a, a + dict(self.fields)[name])

    def c_enum(self) -> str:
        """``enum { PREFIX_NAME = offset, ..., PREFIX_SIZE = size };``"""
        items = [f"{self.prefix}_{n.upper()} = {o}" for n, o in self.offsets.items()]
        return "enum { " + ", ".join(items + [f"{self.prefix}_SIZE = {self.size}"]) + " };"


@dataclass(frozen=True)
class CandidateKind:
    """One kind of contact candidate: ``code`` (the candidate's ``kind`` int), the C prefix
    of its fields, its own ints (after the common ones) and its doubles."""

    name: str
    code: int
    prefix: str
    ints: tuple
    doubles: tuple

    def int_record(self) -> Record:
        return Record(f"CI_{self.prefix}", self.ints, start=CANDIDATE_COMMON.size)

    def double_record(self) -> Record:
        return Record(f"CD_{self.prefix}", self.doubles)


class Sections:
    """A buffer as consecutive named sections; a section's size is the product of its
    factors (ints, dimension names ``nq nv nb nc``, or records: their size).

    Parameters
    ----------
    macro : str
        Name of the generated C macro that declares the sections' pointers.
    ctype : str
        C type of the pointers (``"const double"``, ``"double"``, ``"int"``).
    sections : sequence of (str, tuple)
        Section names (also the C variable names) and their size factors.
    """

    def __init__(self, macro: str, ctype: str, sections: Sequence[tuple]) -> None:
        self.macro, self.ctype = macro, ctype
        self.sections = tuple((str(n), tuple(f)) for n, f in sections)

    @staticmethod
    def _size(factors: tuple, dims: Mapping) -> int:
        n = 1
        for f in factors:
            n *= f.size if isinstance(f, Record) else (dims[f] if isinstance(f, str) else f)
        return n

    def offsets(self, **dims: int) -> dict:
        """``{name: (start, stop)}`` for dimensions ``nq, nv, nb, nc``."""
        out, k = {}, 0
        for name, factors in self.sections:
            n = self._size(factors, dims)
            out[name] = (k, k + n)
            k += n
        return out

    def total(self, **dims: int) -> int:
        """The buffer's length for dimensions ``nq, nv, nb, nc``."""
        return sum(self._size(f, dims) for _, f in self.sections)

    def c_macro(self) -> str:
        """``#define MACRO(base)`` declaring one pointer per section (the C source's local
        variables ``nq, nv, nb, nc`` give the sizes)."""
        lines, prev = [], None
        for name, factors in self.sections:
            expr = "(base)" if prev is None else f"{prev[0]} + {prev[1]}"
            lines.append(f"{self.ctype} *const {name} = {expr};")
            prev = (name, " * ".join(f"{f.prefix}_SIZE" if isinstance(f, Record) else str(f)
                                     for f in factors) or "1")
        return f"#define {self.macro}(base) \\\n    " + " \\\n    ".join(lines)


POSE_DOUBLES = 12
"""A pose as 12 numbers: rotation row-major, then the origin."""
SHAPE_PARAMETERS = NPAR
"""Parameter slots of a shape (those of the narrow phase)."""

_SLOTS_HALFSPACE = {"sphere": 1, "box": 8, "capsule": 2, "cylinder": 8, "ellipsoid": 1}
_SLOTS_PAIR = {("box", "box"): 8, ("box", "cylinder"): 16, ("cylinder", "cylinder"): 16,
               ("box", "capsule"): 2, ("capsule", "cylinder"): 2}


def contact_slots(kind_a: str, kind_b: str) -> int:
    """The most contact points the narrow phase gives for a pair of shape kinds (names of
    ``solvers.collision.KIND_IDS``): a halfspace against box corners (8), cylinder rims (2
    x 4), capsule ends (2); box-box face clipping (8); the flat-face manifolds of box,
    capsule and cylinder pairs (points of both sides); else one point."""
    if kind_a == "halfspace" or kind_b == "halfspace":
        other = kind_b if kind_a == "halfspace" else kind_a
        return _SLOTS_HALFSPACE.get(other, MAX_CONTACTS)
    return _SLOTS_PAIR.get(tuple(sorted((kind_a, kind_b))), 1)


# ---------------------------------------------------------------- the int table
HEADER = Record("HDR", [
    ("nq", 1), ("nv", 1), ("num_bodies", 1), ("num_candidates", 1), ("num_contacts", 1),
    ("num_blocks", 1), ("num_joints", 1), ("num_free", 1), ("max_sweeps", 1), ("num_reach", 1),
    # offsets into the int table
    ("blocks", 1), ("joints", 1), ("free", 1), ("candidates", 1), ("contact_candidate", 1),
    ("reach", 1), ("ancestors", 1),
    # offsets into the double table
    ("cand_doubles", 1), ("reach_radii", 1), ("damping", 1),
    # 1: the input's closure elimination (cproj, cpv) applies
    ("closure_projection", 1),
    # 1: the contact pairs' friction is ODE's box (|p_t1|, |p_t2| <= mu p_n), 0: the disc
    ("friction_box", 1)])
"""Header of the int table ``it``: counts (``num_candidates`` geometry pairs, ``num_contacts``
contact slots: the dimension ``nc`` of the buffers), then absolute offsets of the sub-tables
in ``it`` (``contact_candidate``: per contact slot, the index of its candidate) and of the
candidates' doubles, the reach radii and ``h D`` in ``dt``; ``closure_projection`` 1 when the
input's ``cproj``, ``cpv`` eliminate loop closures (see :data:`INPUT`); ``friction_box`` 1
when the contact pairs' friction is the box ``|p_t1|, |p_t2| <= mu p_n`` along the kernel's
tangents (``PointContactConstraint(friction="box")``), 0 for the disc ``|p_t| <= mu p_n``."""

BLOCK = Record("BLK", [("start", 1), ("length", 1)])
"""A decoupled velocity block (a subtree hanging from the world)."""
JOINT = Record("JNT", [("type", 1), ("q_start", 1), ("v_start", 1), ("nq", 1)])
"""A joint with coordinates; ``type`` one of :data:`JOINT_TYPES`."""
JOINT_TYPES = ("vector", "ball", "free")
"""Joint types by code: ``q + h v``, a quaternion (exponential map), a free joint
(quaternion and straight-line position)."""
FREE = Record("FRJ", [("q_start", 1), ("v_start", 1)])
"""A free joint (for the frame change of its velocity)."""
COLUMN = Record("COL", [("column", 1), ("sign", 1)])
"""One entry of a candidate's column list: a velocity column of ``mask[B] - mask[A]`` and
its sign; the list is followed by the count and indices of the touched velocity blocks."""
ANCESTORS = Record("ANC", [("offset", 1), ("count", 1)])
"""Per body: offset and count of its ancestor columns (for the speculative margin)."""

CANDIDATE_COMMON = Record("CI", [("kind", 1), ("body_a", 1), ("body_b", 1), ("columns", 1),
                                 ("num_columns", 1), ("first_contact", 1),
                                 ("num_contacts", 1)])
"""Ints of every candidate: kind code, bodies A and B, offset and length of its column
list, its first contact slot and its number of slots (the most points its narrow phase
gives)."""

CANDIDATE_KINDS = (
    CandidateKind("shape_pair", 0, "SP",
                  ints=(("shape_a", 1), ("shape_b", 1)),
                  doubles=(("pose_a", POSE_DOUBLES), ("pose_b", POSE_DOUBLES),
                           ("param_a", SHAPE_PARAMETERS), ("param_b", SHAPE_PARAMETERS),
                           ("pair_margin", 1))),
    CandidateKind("joint_limit", 1, "JL",
                  ints=(("coordinate", 1), ("velocity", 1), ("sign", 1)),
                  doubles=(("bound", 1), ("margin", 1), ("erp", 1), ("cfm", 1))),
    CandidateKind("joint_friction", 2, "JF",
                  ints=(("velocity", 1),),
                  doubles=(("bound", 1), ("cfm", 1))),
    CandidateKind("closure", 3, "CL",
                  ints=(("num_rows", 1),),
                  doubles=(("erp", 1), ("cfm", 1))),
)
"""The candidate kinds. ``shape_pair``: two collision geometries, each a shape of the narrow
phase (``shape_a``, ``shape_b``: the kind ids of ``solvers.collision.KIND_IDS``; their
parameters; their poses in the frames of bodies A and B: rotation row-major, then the
origin; ``pair_margin``: the sum of the two geometries' contact margins, MuJoCo's
``margin``, 0 without). Every step the kernel runs the narrow phase of
:mod:`solvers.collision` on the pair at the current poses with the step's margin plus
``pair_margin``; each point found fills one of the candidate's contact slots, its signed
distance taken as the narrow phase's minus ``pair_margin`` (as the pivoting step's
``PointContactConstraint.detect``).

``joint_limit``: one side of a joint limit (``multibody.constraints.JointLimitConstraint``),
one slot holding one unilateral row on velocity ``velocity`` with ``J = sign e_velocity``
and ``phi = sign (q[coordinate] - bound)`` (sign +1 for a lower, -1 for an upper limit).
The row is active when ``phi <= margin + h |v[velocity]|`` (the block's own margin); its
bias is ``phi / h`` before the limit and ``erp phi / h`` past it, its ``cfm`` the block's
(force units; ``erp``, ``cfm`` of the context are written into the candidate's doubles);
in the block PGS it is a 1 x 1 block with Delassus ``(M^-1)_ii + cfm / h``, projected on
``p >= 0``. Its column list is the one column ``velocity`` with its sign; its outputs: the
distance ``phi`` and the impulse (point, normal, tangents and friction zero).

``joint_friction``: the Coulomb friction of one velocity coordinate
(``multibody.constraints.JointFrictionConstraint``), one slot holding one box row on
velocity ``velocity``: ``J = e_velocity``, no bias, always active, the impulse bounded by
``|p| <= bound`` (``bound = h F``, the friction force ``F`` over the step), its ``cfm`` the
block's (force units); both doubles are a context's values (written into its scratch
copy). In the block PGS it is a 1 x 1 block with Delassus ``(M^-1)_ii + cfm / h``, the
impulse projected on ``[-bound, bound]``; its outputs: the impulse (distance zero).

``closure``: up to three bilateral rows of a loop-closure block
(``multibody.constraints`` ball, weld, distance, point-on-line; a weld's six rows are two
candidates), one slot with ``num_rows`` rows. The plant evaluates the rows' position error
``phi`` and Jacobian ``J`` each step and writes them into the input sections ``cphi`` and
``cJ`` at the slot (rows past ``num_rows`` zero); always active, bias ``erp phi / h``, its
``cfm`` the block's (both a context's values). In the block PGS it is an unprojected
``num_rows x num_rows`` block ``G = J M^-1 J^T + cfm / h I`` solved exactly; its column
list: the velocity columns of both bodies' ancestors; its outputs: the impulses of its rows
(distance: the largest ``|phi|``), the warm start holding them (``normal``, then
``friction[0:2]``).

Every slot's impulse bounds of its first row are the work sections ``plo``, ``pup``
(``0``, ``inf`` for a contact's normal and a limit; ``-+bound`` for joint friction); a
slot's ``one`` (int work) is 1 when it is a 1 x 1 block (limit or friction)."""

KIND = {k.name: k for k in CANDIDATE_KINDS}
SP_INTS, SP_DOUBLES = KIND["shape_pair"].int_record(), KIND["shape_pair"].double_record()
JL_INTS, JL_DOUBLES = KIND["joint_limit"].int_record(), KIND["joint_limit"].double_record()
JF_INTS, JF_DOUBLES = (KIND["joint_friction"].int_record(),
                       KIND["joint_friction"].double_record())
CL_INTS, CL_DOUBLES = KIND["closure"].int_record(), KIND["closure"].double_record()
CANDIDATE_INTS = max(k.int_record().size for k in CANDIDATE_KINDS)
CANDIDATE_DOUBLES = max(k.double_record().size for k in CANDIDATE_KINDS)

# ---------------------------------------------------------------- per-step records
SCALARS = Record("S", [("h", 1), ("margin", 1), ("mu", 1), ("erp", 1), ("cfm", 1),
                       ("bias_mode", 1), ("tol", 1), ("it_tol", 1), ("euler_damping", 1)])
"""Per-step scalars: h, margin, mu, erp, cfm, bias mode (1: ``phi/h`` always), the
acceptance ``tol`` of the residual, the sweeps' stopping ``it_tol`` and ``euler_damping``
(1: MuJoCo's Euler split of the joint damping, the plant's ``damping_scheme="mujoco_euler"``:
the constraints solved with ``H``, then ``v_n = v + (H + h D)^{-1} H (v_M - v)``; 0: ``h D``
inside the solve)."""
POSE = Record("POSE", [("rotation", 9), ("position", 3)])
if POSE.size != POSE_DOUBLES:
    raise ImportError("solvers._contact_layout: a pose is 12 numbers")
"""A body's pose in the dynamics function's output ``P``: ``R`` (row-major), ``p``."""
WARM = Record("WS", [("normal", 1), ("friction", 3)])
"""A contact slot's warm start: normal impulse and world-axes friction impulse."""
STATUS = Record("ST", [("converged", 1), ("sweeps", 1), ("active_contacts", 1),
                       ("residual", 1), ("margin", 1), ("failed_candidate", 1),
                       ("narrow_phase", 1)])
"""The step's status: 1.0 when accepted (residual within ``tol``), PGS sweeps, active
contacts, the residual relative to ``max(1, |J v_free + b|)``, the speculative margin; the
first candidate whose narrow phase failed (-1: none) and its result (a negative status of
``solvers.collision``, or the number of points when more than its slots)."""
FOUND = Record("NP", CONTACT_FIELDS)
"""A point of the narrow phase (``solvers.collision``'s contact record): point on A, point
on B, unit normal from A to B, signed distance."""
if FOUND.size != CONTACT_DOUBLES:
    raise ImportError("solvers._contact_layout: the narrow phase's contact record changed")
CANDIDATE_OUT = Record("CO", [("active", 1), ("distance", 1), ("point", 3), ("normal", 3),
                              ("t1", 3), ("t2", 3), ("impulse", 3), ("slip", 2),
                              ("warm", WARM.size)])
"""Outputs per contact slot: active (1.0/0.0), signed distance, point, normal, tangents,
impulses (normal, t1, t2), slip along t1, t2 at the new velocity, warm start out (all zero
where the slot's pair gave no point)."""

NARROW_PHASE_WORK = (16 + 9 * 8 * CAPACITY["MAXV"] + 64 * CAPACITY["MAXF"] + 16
                     + 8 * CAPACITY["MAXH"] + 4 * CAPACITY["MAXV"] ** 2 + 64) // 8
"""Doubles of the narrow phase's work buffer (a bound on its C struct, checked when the
kernel compiles)."""

INPUT = Sections("DBK_IN_SECTIONS", "const double", [
    ("scal", (SCALARS,)), ("q", ("nq",)), ("v", ("nv",)), ("tau", ("nv",)),
    ("H", ("nv", "nv")), ("c", ("nv",)), ("P", (POSE, "nb")), ("S", (6, "nv")),
    ("warm", (WARM, "nc")), ("cphi", (3, "nc")), ("cJ", (3, "nc", "nv")),
    ("cproj", ("nv", "nv")), ("cpv", ("nv",))])
"""The input buffer: scalars, ``q``, ``v``, ``tau``, ``H`` (row-major), ``c = C -
tau_passive``, the poses ``P``, the world-axes motion columns ``S = [W; U]`` (6 x nv), the
warm start, the closure candidates' ``phi`` and ``J``, and the loop closures' elimination
(read only when the header's ``closure_projection`` is 1): the affine map ``v -> cproj v +
cpv`` (``cproj`` row-major) that the kernel applies to the free velocity, and ``cproj`` alone
to each row of ``M^-1 J^T`` of a contact or one-dof row, so that the contact problem is
posed on the closures' constrained Delassus operator (the map is written per step by
``multibody.plants._ts_closures``)."""
OUTPUT = Sections("DBK_OUT_SECTIONS", "double", [
    ("qn", ("nq",)), ("vn", ("nv",)), ("tauc", ("nv",)), ("acc", ("nv",)),
    ("stat", (STATUS,)), ("imp", (3, "nc")), ("wout", (WARM, "nc")),
    ("co", (CANDIDATE_OUT, "nc")), ("Jall", (3, "nv", "nc"))])
"""The output buffer: ``q_next``, ``v_next`` (free joints in their new frames), ``J^T p /
h``, ``(v_next - v) / h``, the status, the block's impulses (normals of the active contacts,
then their (t1, t2) pairs), the warm start out, per contact slot its outputs, its rows (3 x
nv)."""
WORK = Sections("DBK_WORK_SECTIONS", "double", [
    ("L", ("nv", "nv")), ("Minv", ("nv", "nv")), ("vfree", ("nv",)), ("vel", ("nv",)),
    ("Y", (3, "nc", "nv")),
    ("G", (9, "nc")), ("bias", (3, "nc")), ("cfmk", ("nc",)), ("plo", ("nc",)),
    ("pup", ("nc",)), ("tmp", ("nv",)), ("Mp", (9, "nc", "nc")),
    ("xp", (3, "nc")), ("dsl", (2, "nc")), ("psave", (3, "nc")), ("psol2", (3, "nc")),
    ("vtmp", ("nv",)), ("Jc", (3, "nc", "nv")), ("Yc", (3, "nc", "nv")),
    ("gi", (8, "nc")), ("jl", (3, "nv")), ("wsl", (3, "nc")),
    ("found", (FOUND, MAX_CONTACTS)), ("npwork", (NARROW_PHASE_WORK,))])
"""Work doubles of the C kernel (the numpy twin does not use them); ``cfmk`` the ``cfm / h``
of each contact slot (the contact block's, or a joint limit's, joint friction's or
closure's); ``Minv`` the explicit inverses of the blocks of at most ``MINV_MAX`` (12)
velocities of ``H + h D`` (its other entries unused); ``bias`` three per slot (a closure's rows; the others' first row only);
``plo``, ``pup`` the bounds of each slot's first impulse (:data:`CANDIDATE_KINDS`);
``Jc``, ``Yc`` the sweeps' packed copies of the active slots' rows and
``M^-1 J^T`` (``jo``, ``yo`` their offsets), ``gi`` their per-slot constants; ``jl`` one contact's rows on its candidate's columns; ``found`` the points of one pair, ``npwork`` the narrow phase's work buffer (zeros at first: it initialises itself
on first use)."""
IWORK = Sections("DBK_IWORK_SECTIONS", "int", [
    ("act", ("nc",)), ("idn", ("nc",)), ("idt", ("nc",)), ("one", ("nc",)), ("bil", ("nc",)),
    ("pmode", ("nc",)), ("prow", (3, "nc")), ("jo", ("nc",)), ("yo", ("nc",))])
"""Work ints of the C kernel (``one``: the slot is a 1 x 1 block; ``bil``: a closure
slot's number of bilateral rows, else 0; ``pmode``: the polish's active-set mode of each
active slot, :data:`POLISH_MODES`; ``prow``: the last nonzero column of each row of the
polish's matrix during its elimination)."""

POLISH_MODES = ("off", "slide", "stick", "free", "fixed")
"""The polish's mode of an active slot, by code: a contact without impulse (``off``), sliding
(normal unknown, friction ``mu p_n d`` along a fixed direction ``d``), sticking (three
unknowns); a one-row block's impulse unknown (``free``) or held at a value (``fixed``: at a
bound). A closure's rows are always unknowns."""

RECORDS = (HEADER, BLOCK, JOINT, FREE, COLUMN, ANCESTORS, CANDIDATE_COMMON, SCALARS, POSE,
           WARM, STATUS, CANDIDATE_OUT, FOUND)
BUFFERS = (INPUT, OUTPUT, WORK, IWORK)


def c_declarations() -> str:
    """The C text of the layout: one ``enum`` per record and candidate kind, the joint types
    and kind codes, ``CI``/``CD`` (ints and doubles per candidate), one macro per buffer."""
    out = ["/* generated from solvers/_contact_layout.py: do not edit here */"]
    out += [r.c_enum() for r in RECORDS]
    for k in CANDIDATE_KINDS:
        if k.ints:
            out.append(k.int_record().c_enum())
        out.append(k.double_record().c_enum())
    out.append("enum { " + ", ".join(f"KIND_{k.name.upper()} = {k.code}"
                                     for k in CANDIDATE_KINDS) + " };")
    out.append("enum { " + ", ".join(f"PM_{n.upper()} = {i}"
                                     for i, n in enumerate(POLISH_MODES)) + " };")
    out.append("enum { " + ", ".join(f"JT_{n.upper()} = {i}"
                                     for i, n in enumerate(JOINT_TYPES)) + " };")
    out.append(f"#define NARROW_PHASE_WORK {NARROW_PHASE_WORK}")
    out.append(f"#define CI {CANDIDATE_INTS}   /* ints per candidate */")
    out.append(f"#define CD {CANDIDATE_DOUBLES}   /* doubles per candidate */")
    out += [b.c_macro() for b in BUFFERS]
    return "\n".join(out) + "\n"
