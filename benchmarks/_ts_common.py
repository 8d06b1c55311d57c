"""Scene data shared by the engines of ``bench_time_stepping.py``: sizes, masses, initial
states and the models written once as MJCF text (the 40-DOF humanoid, the four-bar), so that
dynablocks, Drake and MuJoCo simulate the same bodies.

Helper of the benchmark, not part of the library (imported with ``benchmarks/`` on
``sys.path``).
"""
from __future__ import annotations

import os
import time

import numpy as np

H = 1e-3                                  # time step (s)
MU = 0.5                                  # friction of the box, pile, stack and capsule scenes
BOX_SIZE, BOX_MASS = 0.2, 1.0
BALL_R, BALL_MASS, NUM_BALLS = 0.05, 0.1, 10
STACK_SIZE, STACK_MASS, STACK_N, STACK_GAP = 0.2, 1.0, 3, 1e-4
CAPSULE_R, CAPSULE_LEN, CAPSULE_MASS = 0.05, 0.3, 1.0      # length: between the cap centres
ROBOT_MU = 0.8                            # humanoid and human model against the floor
HUMANOID_Z, HUMANOID_TILT = 1.2, 0.3      # pelvis height (m) and tilt about x (rad) at t = 0
HUMAN_WN, HUMAN_ZETA = 40.0, 1.0          # human PD: natural frequency (rad/s), damping ratio
FOURBAR_L, FOURBAR_D, FOURBAR_THETA = 0.5, 0.8, 0.3
FOURBAR_MASSES = (1.0, 2.0, 1.5)          # crank 1, coupler, crank 2 (thin rods)
# the four-bar on the floor: a knob (sphere) mid-coupler, the base raised so that the knob
# meets the floor (z = 0) when the cranks are at KNOB_ANGLE; released at FLOOR_THETA
KNOB_R, KNOB_MU, KNOB_ANGLE, FLOOR_THETA = 0.05, 0.3, 0.6, 1.0
FLOOR_BASE_Z = FOURBAR_L * float(np.cos(KNOB_ANGLE)) + KNOB_R

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED_SKELETON = os.path.join(os.path.dirname(REPO), "shared", "data", "hdm",
                               "cooper-skeleton.txt")
WALKER_SKELETON = os.path.join(REPO, "examples", "data", "walker_skeleton.txt")


class _Clock:
    """The clock every engine's run is timed with (``time.process_time`` with --cpu-time)."""

    now = staticmethod(time.perf_counter)


CLOCK = _Clock()


def pile_positions(r: float = BALL_R, gap: float = 1e-4) -> np.ndarray:
    """Centres (10, 3) of a tetrahedral pile of spheres on z = 0: layers of 6, 3 and 1."""
    d = 2 * r + gap
    s3 = np.sqrt(3.0)
    layer_h = d * np.sqrt(2.0 / 3.0)
    pts = []
    for j in range(3):
        for i in range(3 - j):
            pts.append((i * d + j * d / 2, j * d * s3 / 2, r + gap))
    for j in range(2):
        for i in range(2 - j):
            pts.append((d / 2 + i * d + j * d / 2, d / (2 * s3) + j * d * s3 / 2,
                        r + gap + layer_h))
    pts.append((d, d / s3, r + gap + 2 * layer_h))
    return np.array(pts)


def stack_positions() -> np.ndarray:
    """Centres (3, 3) of three 0.2 m cubes stacked with 0.1 mm gaps, the bottom one resting."""
    s = STACK_SIZE
    return np.array([(0.0, 0.0, s / 2 + k * (s + STACK_GAP)) for k in range(STACK_N)])


def capsule_pose() -> tuple[np.ndarray, np.ndarray]:
    """Position (3,) and quaternion [w, x, y, z] of the capsule lying along x on the floor
    (its axis, z in its frame, turned by +90 degrees about y)."""
    c = np.sqrt(0.5)
    return np.array([0.0, 0.0, CAPSULE_R]), np.array([c, 0.0, c, 0.0])


def tilt_quaternion(angle: float = HUMANOID_TILT) -> np.ndarray:
    """[w, x, y, z] of a rotation by ``angle`` about x (the humanoid's initial lean)."""
    return np.array([np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0])


# ------------------------------------------------------------------ the 40-DOF humanoid
def _limb(name: str, pos, joints: list, geom: str, children: str = "") -> str:
    js = "".join(f'<joint name="{name}_{j}" axis="{ax}" range="{lo} {hi}"/>'
                 for j, ax, lo, hi in joints)
    return (f'<body name="{name}" pos="{pos}">{js}<geom name="{name}_geom" {geom}/>'
            f"{children}</body>")


def humanoid_mjcf() -> str:
    """MJCF text of a 40-DOF humanoid (free pelvis + 34 hinges, 16 capsule limbs and a
    spherical head, joint ranges in degrees, damping 0.5 N m s) standing on a floor plane:
    robot geoms collide with the floor only (``contype=1 conaffinity=0``).

    Joints: abdomen (x, y, z), neck (x, y, z); per arm shoulder (x, y, z), elbow, forearm
    twist, wrist (x, y); per leg hip (x, y, z), knee, ankle (y, x), toe. Body names
    ``pelvis``, ``torso``, ``head``, ``{upper_arm,lower_arm,hand,thigh,shin,foot,toes}_{r,l}``.
    """
    arms, legs = [], []
    for s, y in (("r", -1), ("l", 1)):
        hand = _limb(f"hand_{s}", "0 0 -0.24", [("wrist_x", "1 0 0", -40, 40),
                                                ("wrist_y", "0 1 0", -70, 70)],
                     'type="capsule" size="0.035" fromto="0 0 0 0 0 -0.08"')
        lower = _limb(f"lower_arm_{s}", "0 0 -0.28", [("elbow", "0 1 0", -150, 0),
                                                      ("twist", "0 0 1", -80, 80)],
                      'type="capsule" size="0.04" fromto="0 0 0 0 0 -0.22"', hand)
        arms.append(_limb(f"upper_arm_{s}", f"0 {0.2 * y} 0.28",
                          [("shoulder_x", "1 0 0", -90 if y > 0 else -30, 30 if y > 0 else 90),
                           ("shoulder_y", "0 1 0", -120, 120), ("shoulder_z", "0 0 1", -80, 80)],
                          'type="capsule" size="0.045" fromto="0 0 0 0 0 -0.26"', lower))
        toes = _limb(f"toes_{s}", "0.12 0 -0.04", [("toe", "0 1 0", -30, 45)],
                     'type="capsule" size="0.03" fromto="0 0 0 0.05 0 0"')
        foot = _limb(f"foot_{s}", "0 0 -0.42", [("ankle_y", "0 1 0", -40, 30),
                                                ("ankle_x", "1 0 0", -25, 25)],
                     'type="capsule" size="0.035" fromto="-0.04 0 -0.04 0.1 0 -0.04"', toes)
        shin = _limb(f"shin_{s}", "0 0 -0.42", [("knee", "0 1 0", 0, 150)],
                     'type="capsule" size="0.05" fromto="0 0 0 0 0 -0.36"', foot)
        legs.append(_limb(f"thigh_{s}", f"0 {0.1 * y} -0.05",
                          [("hip_x", "1 0 0", -40 if y > 0 else -20, 20 if y > 0 else 40),
                           ("hip_y", "0 1 0", -110, 30), ("hip_z", "0 0 1", -45, 45)],
                          'type="capsule" size="0.06" fromto="0 0 0 0 0 -0.38"', shin))
    head = _limb("head", "0 0 0.38", [("neck_x", "1 0 0", -45, 45), ("neck_y", "0 1 0", -45, 45),
                                      ("neck_z", "0 0 1", -60, 60)],
                 'type="sphere" size="0.09" pos="0 0 0.1"')
    torso = _limb("torso", "0 0 0.1", [("abdomen_x", "1 0 0", -35, 35),
                                       ("abdomen_y", "0 1 0", -45, 75),
                                       ("abdomen_z", "0 0 1", -45, 45)],
                  'type="capsule" size="0.08" fromto="0 0 0 0 0 0.3"', head + "".join(arms))
    w, x, _, _ = tilt_quaternion()
    fr = f"{ROBOT_MU} 0.005 0.0001"
    return (f'<mujoco model="humanoid40"><compiler angle="degree"/>'
            f'<option timestep="{H}"/>'
            f'<default><joint damping="0.5"/>'
            f'<geom contype="1" conaffinity="0" friction="{fr}"/></default>'
            f'<worldbody><geom name="floor" type="plane" size="0 0 1" contype="0" '
            f'conaffinity="1" friction="{fr}"/>'
            f'<body name="pelvis" pos="0 0 {HUMANOID_Z}" quat="{w} {x} 0 0"><freejoint name="root"/>'
            f'<geom name="pelvis_geom" type="capsule" size="0.07" fromto="0 -0.08 0 0 0.08 0"/>'
            f'{torso}{"".join(legs)}</body></worldbody></mujoco>')


# ------------------------------------------------------------------ the four-bar
def four_bar_mjcf(closure: bool, floor: bool = False) -> str:
    """MJCF text of the planar parallelogram four-bar of
    :func:`multibody.models.parallelogram_four_bar` (thin rods as massive capsules without
    contact): a static ``base`` (welded), crank 1 hanging from the origin, the coupler,
    crank 2 with the site ``tip``; the site ``pivot_b`` at ``(d, 0, 0)`` on the base. With
    ``closure`` MuJoCo's ``<connect>`` equality closes ``tip`` on ``pivot_b``. With
    ``floor`` the base is raised to ``FLOOR_BASE_Z`` and a massless sphere ``knob``
    (``KNOB_R``, friction ``KNOB_MU``) mid-coupler touches a floor plane at z = 0."""
    L, D = FOURBAR_L, FOURBAR_D
    m1, m2, m3 = FOURBAR_MASSES

    def rod(name, mass, to, inner=""):
        a = np.asarray(to, float) / np.linalg.norm(to)
        n = float(np.linalg.norm(to))
        i_perp = mass * n ** 2 / 12.0 + 1e-9
        I = i_perp * (np.eye(3) - np.outer(a, a)) + 1e-9 * np.outer(a, a)
        com = 0.5 * np.asarray(to, float)
        return (f'<inertial pos="{com[0]} {com[1]} {com[2]}" mass="{mass}" fullinertia="'
                f'{I[0, 0]} {I[1, 1]} {I[2, 2]} {I[0, 1]} {I[0, 2]} {I[1, 2]}"/>'
                f'<geom name="{name}_geom" type="capsule" size="0.01" contype="0" '
                f'conaffinity="0" fromto="0 0 0 {to[0]} {to[1]} {to[2]}"/>{inner}')
    crank2 = (f'<body name="crank2" pos="{D} 0 0"><joint name="j3" axis="0 1 0"/>'
              + rod("crank2", m3, (0, 0, L), f'<site name="tip" pos="0 0 {L}"/>') + "</body>")
    knob = (f'<geom name="knob" type="sphere" size="{KNOB_R}" pos="{D / 2} 0 0" mass="0" '
            f'contype="1" conaffinity="0" friction="{KNOB_MU} 0.005 0.0001"/>' if floor else "")
    coupler = (f'<body name="coupler" pos="0 0 {-L}"><joint name="j2" axis="0 1 0"/>'
               + rod("coupler", m2, (D, 0, 0), knob + crank2) + "</body>")
    crank1 = ('<body name="crank1"><joint name="j1" axis="0 1 0"/>'
              + rod("crank1", m1, (0, 0, -L), coupler) + "</body>")
    eq = (f'<equality><connect body1="crank2" body2="base" anchor="0 0 {L}"/></equality>'
          if closure else "")
    ground = (f'<geom name="floor" type="plane" size="0 0 1" contype="0" conaffinity="1" '
              f'friction="{KNOB_MU} 0.005 0.0001"/>' if floor else "")
    base = f' pos="0 0 {FLOOR_BASE_Z}"' if floor else ""
    return (f'<mujoco model="four_bar"><option timestep="{H}"/><worldbody>{ground}'
            f'<body name="base"{base}><site name="pivot_b" pos="{D} 0 0"/>{crank1}</body>'
            f"</worldbody>{eq}</mujoco>")


def four_bar_angles(theta: float = FOURBAR_THETA) -> np.ndarray:
    """Joint angles (j1, j2, j3) of the closed four-bar released at ``theta``."""
    return np.array([theta, -theta, theta])


# ------------------------------------------------------------------ the human model
def human_skeleton(path: str | None = None) -> str:
    """The skeleton file of the human scene: ``path``, else the shared HDM skeleton (48 DOF)
    where ``../shared`` holds it, else the 25-DOF walker of ``examples/data``."""
    if path:
        return path
    return SHARED_SKELETON if os.path.exists(SHARED_SKELETON) else WALKER_SKELETON


def human_setup(skeleton: str | None = None) -> dict:
    """The human model standing on the floor: ``model`` (:class:`HumanModel`), ``q0``
    (reference pose, feet on z = 0), the actuated coordinates ``dofs`` (every joint
    coordinate, in ``v`` order), per-coordinate PD gains ``kp``, ``kd`` (``wn^2 I_i``,
    ``2 zeta wn I_i`` with the effective inertia ``I_i = 1 / (M^{-1})_ii`` of the floating
    body at ``q0``: explicit PD stays stable at h = 1 ms, ``h rho(M^{-1} K_d) ~ 0.3``) and
    the foot/toe boxes ``feet`` (body, box shape, pose) that touch the floor."""
    from multibody import geometry as G
    from multibody.models import human_model

    model = human_model(human_skeleton(skeleton))
    tree = model.tree
    q0 = model.reference_configuration()
    root = tree.get_joint("floating_base")
    dofs = [i for i in range(tree.nv) if not root.v_start <= i < root.v_start + root.nv]
    inertia = 1.0 / np.diag(np.linalg.inv(np.asarray(tree.mass_matrix(q0), float)))[dofs]
    feet = [(b.name, g.shape, np.asarray(g.pose, float)) for b in tree.bodies
            for g in b.visual_geometries
            if b.name in model.foot_contact_points and isinstance(g.shape, G.Box)]
    return dict(model=model, q0=q0, dofs=dofs, kp=HUMAN_WN ** 2 * inertia,
                kd=2 * HUMAN_ZETA * HUMAN_WN * inertia, feet=feet)
