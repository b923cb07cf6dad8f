"""URDF → MJCF conversion done by simjudge, cached per asset.

Why our own converter: MuJoCo's URDF import drops what it does not know (joint
damping and friction, effort limits, actuators) and merges links joined by fixed
joints, which would renumber links. This module reads the URDF itself and writes
an MJCF model with

- one MuJoCo body per URDF link, in the link order PyBullet uses (the base, then
  a depth-first walk over child joints in file order), so link index ``i`` is the
  child of joint ``i`` in every backend;
- explicit inertials (mass, centre of mass, full inertia), joint ranges, damping,
  friction (``frictionloss``), effort limits (``actuatorfrcrange``);
- a position actuator on every movable joint (gains set at run time);
- collision geoms from the URDF ``<collision>`` elements (boxes, cylinders,
  spheres; meshes become their convex hulls) and visual geoms from ``<visual>``
  (one geom when a visual repeats its collision shape).

The output is a pure function of the URDF text, the scale and the base mode, so
it is cached on disk under a hash of those (:func:`cached_mjcf`) and reproducible
from the URDF at any time (:func:`urdf_to_mjcf`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import SimjudgeError
from .base import BackendError

__all__ = [
    "MESH_HULL_VERTICES",
    "MJCF_FORMAT",
    "MjcfConversionError",
    "UrdfGeom",
    "UrdfJoint",
    "UrdfLink",
    "UrdfModel",
    "cached_mjcf",
    "mjcf_cache_dir",
    "parse_urdf",
    "pybullet_data_dir",
    "urdf_to_mjcf",
]

MJCF_FORMAT = 4
"""Bumped whenever the generated MJCF changes, so stale cache entries are not reused."""

MESH_HULL_VERTICES = 64
"""Vertices kept in a collision mesh's convex hull (MuJoCo's ``maxhullvert``): the Panda's
link hulls keep their shape to a few millimetres and collide several times faster."""

DEFAULT_FRICTION = 0.5
"""Sliding friction of every geom (PyBullet's default lateral friction)."""


class MjcfConversionError(SimjudgeError, ValueError):
    """A URDF could not be converted to MJCF; the message names the element and the fix."""


@dataclass(frozen=True)
class UrdfGeom:
    """One collision or visual shape of a link (already scaled).

    Attributes:
        kind: ``box``, ``cylinder``, ``sphere`` or ``mesh``.
        size: MuJoCo size: box half-extents, cylinder ``(radius, half-length)``,
            sphere ``(radius,)``; empty for meshes.
        pos: Position in the link frame.
        quat: Orientation in the link frame ``(w, x, y, z)``.
        mesh: Absolute mesh file path (meshes only).
        mesh_scale: Mesh scale (meshes only).
        rgba: Colour (visual shapes).
    """

    kind: str
    size: tuple[float, ...]
    pos: tuple[float, float, float]
    quat: tuple[float, float, float, float]
    mesh: str = ""
    mesh_scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    rgba: tuple[float, float, float, float] = (0.7, 0.7, 0.7, 1.0)

    def same_shape(self, other: UrdfGeom) -> bool:
        """Whether both describe the same geometry at the same place (colour aside)."""
        return (self.kind, self.size, self.pos, self.quat, self.mesh, self.mesh_scale) == (
            other.kind, other.size, other.pos, other.quat, other.mesh, other.mesh_scale
        )


@dataclass(frozen=True)
class UrdfLink:
    """One URDF link: inertial and shapes (scaled)."""

    name: str
    mass: float
    com: tuple[float, float, float]
    inertia_quat: tuple[float, float, float, float]
    inertia: tuple[float, ...]
    collisions: tuple[UrdfGeom, ...]
    visuals: tuple[UrdfGeom, ...]


@dataclass(frozen=True)
class UrdfJoint:
    """One URDF joint (``continuous`` joints are ``revolute`` with ``limited=False``)."""

    name: str
    type: str
    parent: int
    child: int
    pos: tuple[float, float, float]
    quat: tuple[float, float, float, float]
    axis: tuple[float, float, float]
    lower: float
    upper: float
    limited: bool
    effort: float
    velocity: float
    damping: float
    friction: float


@dataclass(frozen=True)
class UrdfModel:
    """A parsed URDF in PyBullet's link order.

    Attributes:
        name: Robot name.
        links: Links; ``links[0]`` is the base, ``links[i + 1]`` the child of ``joints[i]``.
        joints: Joints in index order.
    """

    name: str
    links: tuple[UrdfLink, ...]
    joints: tuple[UrdfJoint, ...] = field(default=())


def _floats(text: str | None, default: tuple[float, ...]) -> tuple[float, ...]:
    if text is None:
        return default
    return tuple(float(x) for x in text.split())


def _rpy_quat(rpy: tuple[float, ...]) -> tuple[float, float, float, float]:
    """URDF roll-pitch-yaw (fixed x, y, z) as a ``(w, x, y, z)`` quaternion."""
    r, p, y = (v / 2.0 for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )


def _origin(tag: ET.Element | None, scale: float) -> tuple[tuple[float, float, float], tuple]:
    origin = tag.find("origin") if tag is not None else None
    xyz = _floats(origin.get("xyz") if origin is not None else None, (0.0, 0.0, 0.0))
    rpy = _floats(origin.get("rpy") if origin is not None else None, (0.0, 0.0, 0.0))
    return (xyz[0] * scale, xyz[1] * scale, xyz[2] * scale), _rpy_quat(rpy)


def _geom(tag: ET.Element, urdf_dir: Path, scale: float, rgba: tuple) -> UrdfGeom:
    pos, quat = _origin(tag, scale)
    shape = tag.find("geometry")
    child = shape[0] if shape is not None and len(shape) else None
    if child is None:
        raise MjcfConversionError(f"a <{tag.tag}> has no <geometry>; give it a box, cylinder, sphere or mesh")
    if child.tag == "box":
        size = tuple(v * scale / 2.0 for v in _floats(child.get("size"), (0.1, 0.1, 0.1)))
        return UrdfGeom("box", size, pos, quat, rgba=rgba)
    if child.tag == "cylinder":
        radius, length = float(child.get("radius", 0.05)), float(child.get("length", 0.1))
        return UrdfGeom("cylinder", (radius * scale, length * scale / 2.0), pos, quat, rgba=rgba)
    if child.tag == "sphere":
        return UrdfGeom("sphere", (float(child.get("radius", 0.05)) * scale,), pos, quat, rgba=rgba)
    if child.tag == "mesh":
        filename = child.get("filename", "")
        for prefix in ("package://", "file://"):
            if filename.startswith(prefix):
                filename = filename[len(prefix):]
        path = (urdf_dir / filename).resolve()
        if not path.is_file():
            raise MjcfConversionError(f"mesh {filename!r} of the URDF in {urdf_dir} does not exist")
        mesh_scale = _floats(child.get("scale"), (1.0, 1.0, 1.0))
        scaled = (mesh_scale[0] * scale, mesh_scale[1] * scale, mesh_scale[2] * scale)
        return UrdfGeom("mesh", (), pos, quat, mesh=str(path), mesh_scale=scaled, rgba=rgba)
    raise MjcfConversionError(
        f"unsupported URDF geometry <{child.tag}> in {urdf_dir}; use box, cylinder, sphere or mesh"
    )


def _link(tag: ET.Element, urdf_dir: Path, scale: float, materials: dict[str, tuple]) -> UrdfLink:
    inertial = tag.find("inertial")
    mass, com, quat = 0.0, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)
    inertia: tuple[float, ...] = (0.0,) * 6
    if inertial is not None:
        mass_tag = inertial.find("mass")
        mass = float(mass_tag.get("value", 0.0)) if mass_tag is not None else 0.0
        com, quat = _origin(inertial, scale)
        itag = inertial.find("inertia")
        if itag is not None:
            keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
            inertia = tuple(float(itag.get(k, 0.0)) * scale * scale for k in keys)
    visuals = []
    for vtag in tag.findall("visual"):
        rgba = (0.7, 0.7, 0.7, 1.0)
        material = vtag.find("material")
        if material is not None:
            color = material.find("color")
            if color is not None:
                rgba = tuple(_floats(color.get("rgba"), rgba))  # type: ignore[assignment]
            elif material.get("name") in materials:
                rgba = materials[material.get("name", "")]
        visuals.append(_geom(vtag, urdf_dir, scale, rgba))
    collisions = tuple(_geom(ctag, urdf_dir, scale, (0.7, 0.7, 0.7, 1.0)) for ctag in tag.findall("collision"))
    return UrdfLink(tag.get("name", ""), mass, com, quat, inertia, collisions, tuple(visuals))


def parse_urdf(path: str | Path, scale: float = 1.0) -> UrdfModel:
    """Read a URDF into links and joints in PyBullet's order (scaled by ``scale``).

    Raises:
        MjcfConversionError: The file is missing, not a URDF, or not a single tree.
    """
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise MjcfConversionError(f"cannot read URDF {path}: {exc}") from exc
    materials = {}
    for material in root.findall("material"):
        color = material.find("color")
        if color is not None:
            materials[material.get("name", "")] = _floats(color.get("rgba"), (0.7, 0.7, 0.7, 1.0))
    link_tags = {tag.get("name", ""): tag for tag in root.findall("link")}
    joint_tags = root.findall("joint")
    children: dict[str, list[ET.Element]] = {}
    child_names = set()
    for jtag in joint_tags:
        parent, child = jtag.find("parent"), jtag.find("child")
        if parent is None or child is None:
            raise MjcfConversionError(f"joint {jtag.get('name')!r} in {path} lacks <parent> or <child>")
        children.setdefault(parent.get("link", ""), []).append(jtag)
        child_names.add(child.get("link", ""))
    roots = [name for name in link_tags if name not in child_names]
    if len(roots) != 1:
        raise MjcfConversionError(f"URDF {path} must be one tree with one root link, found roots {roots}")
    urdf_dir = path.parent
    links = [_link(link_tags[roots[0]], urdf_dir, scale, materials)]
    joints: list[UrdfJoint] = []

    def walk(link_name: str, link_index: int) -> None:
        for jtag in children.get(link_name, []):
            child_name = jtag.find("child").get("link", "")  # type: ignore[union-attr]
            links.append(_link(link_tags[child_name], urdf_dir, scale, materials))
            index = len(joints)
            joints.append(_joint(jtag, link_index, index, scale))
            walk(child_name, index)

    walk(roots[0], -1)
    return UrdfModel(root.get("name", path.stem), tuple(links), tuple(joints))


def _joint(tag: ET.Element, parent: int, index: int, scale: float) -> UrdfJoint:
    kind = tag.get("type", "fixed")
    if kind not in ("revolute", "continuous", "prismatic", "fixed"):
        raise MjcfConversionError(
            f"joint {tag.get('name')!r} has type {kind!r}; simjudge's MJCF conversion supports "
            "revolute, continuous, prismatic and fixed joints"
        )
    pos, quat = _origin(tag, scale)
    axis_tag = tag.find("axis")
    axis = _floats(axis_tag.get("xyz") if axis_tag is not None else None, (1.0, 0.0, 0.0))
    norm = math.sqrt(sum(a * a for a in axis)) or 1.0
    limit = tag.find("limit")
    dynamics = tag.find("dynamics")

    def attr(element: ET.Element | None, key: str, default: float) -> float:
        return float(element.get(key, default)) if element is not None else default

    lower, upper = attr(limit, "lower", 0.0), attr(limit, "upper", -1.0)
    limited = kind in ("revolute", "prismatic") and lower <= upper
    if kind == "prismatic":
        lower, upper = lower * scale, upper * scale
    if kind == "fixed":
        axis, lower, upper = (0.0, 0.0, 0.0), 0.0, -1.0
    return UrdfJoint(
        name=tag.get("name", f"joint_{index}"),
        type="revolute" if kind == "continuous" else kind,
        parent=parent,
        child=index,
        pos=pos,
        quat=quat,
        axis=tuple(a / norm for a in axis) if kind != "fixed" else axis,  # type: ignore[arg-type]
        lower=lower if kind != "continuous" else 0.0,
        upper=upper if kind != "continuous" else -1.0,
        limited=limited,
        effort=attr(limit, "effort", 0.0),
        velocity=attr(limit, "velocity", 0.0),
        damping=attr(dynamics, "damping", 0.0),
        friction=attr(dynamics, "friction", 0.0),
    )


# writing ------------------------------------------------------------------------------
def _fmt(values) -> str:
    return " ".join(repr(round(float(v), 12)) for v in values)


def _mesh_name(path: str, scale: tuple[float, float, float]) -> str:
    digest = hashlib.sha256(f"{path}|{scale}".encode()).hexdigest()[:10]
    return f"mesh_{Path(path).stem}_{digest}"


def _geom_element(parent: ET.Element, geom: UrdfGeom, collide: bool, visible: bool, name: str) -> None:
    attrs = {"name": name, "type": geom.kind, "pos": _fmt(geom.pos), "quat": _fmt(geom.quat)}
    if geom.kind == "mesh":
        attrs["mesh"] = _mesh_name(geom.mesh, geom.mesh_scale)
    else:
        attrs["size"] = _fmt(geom.size)
    if collide:
        attrs.update(contype="1", conaffinity="1", group="0" if visible else "3")
    else:
        attrs.update(contype="0", conaffinity="0", group="1")
    attrs["rgba"] = _fmt(geom.rgba if visible else (0.5, 0.5, 0.5, 0.0))
    ET.SubElement(parent, "geom", attrs)


def _link_frame_inertia(link: UrdfLink) -> tuple[float, ...]:
    """The inertia tensor in link-frame axes (MJCF's ``fullinertia`` takes no rotation)."""
    ixx, iyy, izz, ixy, ixz, iyz = link.inertia
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    w, x, y, z = link.inertia_quat
    rotation = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
    tensor = rotation @ tensor @ rotation.T
    diagonal = [max(float(tensor[i, i]), 1e-8) for i in range(3)]
    return (*diagonal, float(tensor[0, 1]), float(tensor[0, 2]), float(tensor[1, 2]))


def _body_element(parent: ET.Element, model: UrdfModel, link_index: int, pos, quat) -> ET.Element:
    """``link_index`` is -1 for the base, else the child link of joint ``link_index``."""
    link = model.links[link_index + 1]
    body = ET.SubElement(parent, "body", {"name": f"link{link_index}", "pos": _fmt(pos), "quat": _fmt(quat)})
    mass = link.mass
    if link_index >= 0 and model.joints[link_index].type != "fixed":
        mass = max(mass, 1e-4)  # a moving body needs mass
    if mass > 0.0:
        ET.SubElement(body, "inertial", {
            "pos": _fmt(link.com), "mass": repr(mass), "fullinertia": _fmt(_link_frame_inertia(link)),
        })
    if link_index >= 0:
        joint = model.joints[link_index]
        if joint.type != "fixed":
            attrs = {
                "name": f"joint{link_index}",
                "type": "hinge" if joint.type == "revolute" else "slide",
                "axis": _fmt(joint.axis),
                "damping": repr(joint.damping),
                "frictionloss": repr(joint.friction),
                "limited": "true" if joint.limited else "false",
                "armature": "0.01",
            }
            if joint.limited:
                attrs["range"] = _fmt((joint.lower, joint.upper))
            ET.SubElement(body, "joint", attrs)
    number = 0
    # mesh visuals are left out when the link has collision shapes: those are drawn
    # instead (a robot's render meshes cost compile time and carry broken texture data)
    mesh_visuals = bool(link.collisions) and any(v.kind == "mesh" for v in link.visuals)
    for geom in link.collisions:
        visible = mesh_visuals or any(v.same_shape(geom) for v in link.visuals)
        rgba_source = next((v for v in link.visuals if v.same_shape(geom)), geom)
        _geom_element(body, UrdfGeom(**{**geom.__dict__, "rgba": rgba_source.rgba}), True, visible, f"g{link_index}_{number}")
        number += 1
    for geom in link.visuals:
        if not mesh_visuals and not any(geom.same_shape(c) for c in link.collisions):
            _geom_element(body, geom, False, True, f"g{link_index}_{number}")
            number += 1
    for joint in model.joints:
        if joint.parent == link_index:
            _body_element(body, model, joint.child, joint.pos, joint.quat)
    return body


def urdf_to_mjcf(path: str | Path, scale: float = 1.0, fixed_base: bool = False) -> str:
    """The MJCF text of a URDF (a complete model with the asset at the origin).

    Bodies are named ``link-1`` (the base) and ``link<i>``, joints ``joint<i>``,
    actuators ``act<i>``, after the URDF joint index ``i``; a free base gets a
    free joint named ``root``. The URDF names are kept in ``<custom>`` text.
    """
    model = parse_urdf(path, scale)
    mujoco_el = ET.Element("mujoco", {"model": model.name})
    ET.SubElement(mujoco_el, "compiler", {"angle": "radian", "inertiafromgeom": "false", "autolimits": "true"})
    asset = ET.SubElement(mujoco_el, "asset")
    meshes = sorted({
        (g.mesh, g.mesh_scale) for link in model.links for g in (*link.collisions, *link.visuals) if g.kind == "mesh"
    })
    for mesh, mesh_scale in meshes:
        ET.SubElement(asset, "mesh", {"name": _mesh_name(mesh, mesh_scale), "file": mesh, "scale": _fmt(mesh_scale),
                                      "maxhullvert": str(MESH_HULL_VERTICES)})
    world = ET.SubElement(mujoco_el, "worldbody")
    base = _body_element(world, model, -1, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
    if not fixed_base:
        base.insert(0, ET.Element("freejoint", {"name": "root"}))
    actuators = ET.SubElement(mujoco_el, "actuator")
    for joint in model.joints:
        if joint.type != "fixed":
            ET.SubElement(actuators, "position", {
                "name": f"act{joint.child}", "joint": f"joint{joint.child}", "kp": "0",
                "forcelimited": "true", "forcerange": _fmt((-max(joint.effort, 1e-6), max(joint.effort, 1e-6))),
            })
    # no two links of one articulation collide: PyBullet loads URDFs without
    # URDF_USE_SELF_COLLISION (MuJoCo would filter parent-child pairs only, and not even
    # those when the parent is welded to the world, a fixed base)
    contact = ET.SubElement(mujoco_el, "contact")
    for first, second in itertools.combinations(range(-1, len(model.joints)), 2):
        ET.SubElement(contact, "exclude", {"body1": f"link{first}", "body2": f"link{second}"})
    custom = ET.SubElement(mujoco_el, "custom")
    names = [model.links[0].name] + [f"{j.name}|{model.links[j.child + 1].name}" for j in model.joints]
    for i, name in enumerate(names):
        ET.SubElement(custom, "text", {"name": f"urdf{i - 1}", "data": name})
    ET.indent(mujoco_el)
    return ET.tostring(mujoco_el, encoding="unicode") + "\n"


def mjcf_cache_dir() -> Path:
    """Where generated MJCF is cached (``$SIMJUDGE_MJCF_CACHE`` or ``~/.cache/simjudge/mjcf``)."""
    env = os.environ.get("SIMJUDGE_MJCF_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "simjudge" / "mjcf"


def cached_mjcf(path: str | Path, scale: float = 1.0, fixed_base: bool = False) -> Path:
    """The cached MJCF file of a URDF, written on first use.

    The cache key hashes the URDF text, its absolute path (mesh paths are
    absolute), the scale, the base mode and :data:`MJCF_FORMAT`; the file is
    written atomically (temporary file, then rename), so concurrent processes
    never read a half-written model.
    """
    path = Path(path).resolve()
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise MjcfConversionError(f"cannot read URDF {path}: {exc}") from exc
    key = hashlib.sha256(
        b"|".join([text, str(path).encode(), repr(float(scale)).encode(), str(bool(fixed_base)).encode(),
                   str(MJCF_FORMAT).encode()])
    ).hexdigest()[:20]
    target = mjcf_cache_dir() / f"{path.parent.name}-{key}.xml"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(urdf_to_mjcf(path, scale, fixed_base))
        os.replace(tmp, target)
    return target


def pybullet_data_dir() -> Path:
    """Where ``franka_panda/panda.urdf`` lives (pybullet_data ships it; no pybullet import)."""
    import importlib.util

    spec = importlib.util.find_spec("pybullet_data")
    if spec is None or spec.origin is None:
        raise BackendError("the Panda model comes from the `pybullet_data` package; `pip install pybullet`")
    return Path(spec.origin).parent
