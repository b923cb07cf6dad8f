"""Make the decimated visual Panda (``assets/robots/panda_lowpoly``) from pybullet's stock one.

Why: PyBullet's CPU renderer (TinyRenderer) costs time per triangle, and the stock Panda's
visual meshes have ~116k triangles (the world around it a few hundred): every frame cost
20-40 ms whatever the resolution, and each env held the meshes in memory. The collision meshes
are too coarse to look like a Panda; quadric-error decimation (``fast-simplification``, the
Fast-Quadric-Mesh-Simplification algorithm) of the visual meshes keeps the silhouette and the
colours at a fraction of the triangles.

What it does, per visual mesh of ``pybullet_data/franka_panda``: split the OBJ by material
(``usemtl`` groups), decimate each group with ``fast_simplification.simplify`` (groups under
``--min-faces`` triangles are kept as they are), give each new vertex the texture coordinate
of the nearest original vertex of its group and an area-weighted vertex normal. The stock
meshes are coloured by a 1024² palette texture (``colors.png``) that PyBullet decodes once per
material, ~29 MiB per env: here each face takes the palette colour under its corners, the
colours of a group are merged into a few (``--colour-step``), and all colours go into one
tiny palette texture (``palette.png``, 4x4 texels per colour) that the faces index with
their texture coordinates (PyBullet's renderer takes one material per OBJ file, so colours
must come from a texture). The URDF and the collision meshes are
copied unchanged, so physics (collision shapes, inertia) is exactly the stock robot's; the
stock files are not touched.

Usage: ``python tools/decimate_panda.py [--reduction 0.92] [--min-faces 64] [--out DIR]``
(prints triangles before and after per mesh). Needs ``fast-simplification`` and ``scipy``.
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["main"]

OUT = Path(__file__).resolve().parents[1] / "assets" / "robots" / "panda_lowpoly"


@dataclass
class _Group:
    """The faces of one material: corner indices into the OBJ's v / vt arrays."""

    material: str
    positions: list[list[int]] = field(default_factory=list)
    uvs: list[list[int]] = field(default_factory=list)


@dataclass
class _Obj:
    mtllib: str | None
    v: np.ndarray
    vt: np.ndarray
    groups: list[_Group]


def read_mtl(path: Path) -> dict[str, dict[str, str]]:
    """Material name -> its statements (``Kd``, ``map_Kd`` ...) of an MTL file."""
    materials: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in path.read_text().splitlines():
        head, _, rest = line.strip().partition(" ")
        if head == "newmtl":
            current = materials.setdefault(rest.strip(), {})
        elif head and not head.startswith("#"):
            current[head] = rest.strip()
    return materials


def _face_colours(uvs: np.ndarray, faces: np.ndarray, texture: np.ndarray) -> np.ndarray:
    """RGB in [0, 1] per face: the palette texel under each corner, averaged."""
    h, w = texture.shape[:2]
    col = np.clip((uvs[:, 0] % 1.0) * (w - 1), 0, w - 1).round().astype(int)
    row = np.clip((1.0 - uvs[:, 1] % 1.0) * (h - 1), 0, h - 1).round().astype(int)
    texel = texture[row, col, :3].astype(np.float64) / 255.0
    return texel[faces].mean(axis=1)


def _colour_clusters(colours: np.ndarray, step: float, min_share: float) -> np.ndarray:
    """A cluster index per face: colours rounded to ``step``, rare ones merged into the nearest."""
    keys = np.round(colours / step).astype(int)
    unique, index, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    index = index.reshape(-1)
    big = np.flatnonzero(counts >= max(1, min_share * len(colours)))
    if not len(big):
        big = np.array([int(np.argmax(counts))])
    centres = unique[big].astype(np.float64)
    nearest = np.argmin(((unique[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
    return nearest[index]


def _corner(token: str) -> tuple[int, int]:
    parts = token.split("/")
    return int(parts[0]) - 1, (int(parts[1]) - 1 if len(parts) > 1 and parts[1] else -1)


def read_obj(path: Path) -> _Obj:
    """Positions, texture coordinates and per-material triangle lists of an OBJ file."""
    v: list[list[float]] = []
    vt: list[list[float]] = []
    groups: list[_Group] = []
    mtllib = None
    current = _Group("")
    for line in path.read_text().splitlines():
        head, _, rest = line.partition(" ")
        if head == "v":
            v.append([float(x) for x in rest.split()[:3]])
        elif head == "vt":
            vt.append([float(x) for x in rest.split()[:2]])
        elif head == "mtllib":
            mtllib = rest.strip()
        elif head == "usemtl":
            current = _Group(rest.strip())
            groups.append(current)
        elif head == "f":
            corners = [_corner(t) for t in rest.split()]
            for i in range(1, len(corners) - 1):  # fan-triangulate polygons
                tri = (corners[0], corners[i], corners[i + 1])
                current.positions.append([c[0] for c in tri])
                current.uvs.append([c[1] for c in tri])
    if current.positions and current not in groups:
        groups.append(current)
    return _Obj(mtllib, np.array(v), np.array(vt) if vt else np.zeros((0, 2)), groups)


def _normals(points: np.ndarray, faces: np.ndarray) -> np.ndarray:
    tri = points[faces]
    face_n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])  # length = 2 · area
    normals = np.zeros_like(points)
    for k in range(3):
        np.add.at(normals, faces[:, k], face_n)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return normals / np.where(length > 0, length, 1.0)


def _decimate(obj: _Obj, group: _Group, reduction: float, min_faces: int):
    """(points, uvs, faces) of one material group, decimated unless it is small."""
    import fast_simplification
    from scipy.spatial import cKDTree

    faces = np.array(group.positions)
    used, local = np.unique(faces, return_inverse=True)
    local = local.reshape(faces.shape)
    points = obj.v[used]
    uv_of = np.zeros((len(used), 2))
    if len(obj.vt):
        corner_uv = np.array(group.uvs).reshape(-1)
        uv_of[local.reshape(-1)] = obj.vt[np.maximum(corner_uv, 0)]
    if len(faces) < min_faces:
        return points, uv_of, local
    new_points, new_faces = fast_simplification.simplify(
        points.astype(np.float64), local.astype(np.int64), target_reduction=reduction
    )
    _, nearest = cKDTree(points).query(new_points)
    return new_points, uv_of[nearest], new_faces


_CELL = 4
"""Texels per palette colour (a square cell; faces sample its centre)."""


def write_obj(
    obj: _Obj,
    path: Path,
    materials: dict[str, dict[str, str]],
    texture: np.ndarray,
    palette: list[tuple[int, int, int]],
    args: argparse.Namespace,
) -> tuple[int, int]:
    """Write the decimated OBJ (colours appended to ``palette``); return triangles before/after."""
    groups = []
    before = after = 0
    for group in obj.groups:
        if not group.positions:
            continue
        points, uvs, faces = _decimate(obj, group, args.reduction, args.min_faces)
        before += len(group.positions)
        after += len(faces)
        statements = materials.get(group.material, {})
        diffuse = np.array([float(x) for x in statements.get("Kd", "1 1 1").split()[:3]])
        if "map_Kd" in statements:  # PyBullet shows the texture, not Kd
            colours = _face_colours(uvs, faces, texture)
        else:
            colours = np.tile(diffuse, (len(faces), 1))
        clusters = _colour_clusters(colours, args.colour_step, 0.02)
        cells = np.zeros(len(faces), dtype=int)
        for cluster in np.unique(clusters):
            chosen = clusters == cluster
            rgb = tuple(int(round(255 * c)) for c in colours[chosen].mean(axis=0))
            if rgb not in palette:
                palette.append(rgb)
            cells[chosen] = palette.index(rgb)
        groups.append((points, faces, cells))
    lines = [
        "# decimated by tools/decimate_panda.py from pybullet_data/franka_panda",
        f"mtllib {path.with_suffix('.mtl').name}",
        f"o {path.stem}",
    ]
    for points, _faces, _ in groups:
        lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in points]
    for points, faces, _ in groups:
        lines += [f"vn {x:.5f} {y:.5f} {z:.5f}" for x, y, z in _normals(points, faces)]
    lines += [f"vt {u:.6f} 0.500000" for u in _cell_u(len(palette))]
    lines.append("usemtl palette")
    offset = 0
    for points, faces, cells in groups:
        for face, cell in zip(faces + offset + 1, cells + 1, strict=True):
            lines.append("f " + " ".join(f"{i}/{cell}/{i}" for i in face))
        offset += len(points)
    path.write_text("\n".join(lines) + "\n")
    path.with_suffix(".mtl").write_text(
        "# one palette texture for every colour, see tools/decimate_panda.py\n"
        "newmtl palette\nKa 1.000000 1.000000 1.000000\nKd 1.000000 1.000000 1.000000\n"
        "Ks 0.030000 0.030000 0.030000\nd 1.000000\nillum 2\nmap_Kd palette.png\n"
    )
    return before, after


def _cell_u(count: int, capacity: int = 64) -> list[float]:
    """Texture u of the centre of each palette cell (the palette holds ``capacity`` cells)."""
    return [(k * _CELL + _CELL / 2) / (capacity * _CELL) for k in range(count)]


def write_palette(path: Path, palette: list[tuple[int, int, int]], capacity: int = 64) -> None:
    """The palette texture: one ``_CELL``² square per colour, in a row of ``capacity`` cells."""
    from PIL import Image

    if len(palette) > capacity:
        raise ValueError(f"{len(palette)} colours do not fit a palette of {capacity}")
    image = np.zeros((_CELL, capacity * _CELL, 3), dtype=np.uint8)
    for k, rgb in enumerate(palette):
        image[:, k * _CELL : (k + 1) * _CELL] = rgb
    Image.fromarray(image).save(path)


def main() -> None:
    """Decimate every stock visual mesh and copy the rest of the robot."""
    import pybullet_data

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reduction", type=float, default=0.92, help="share of faces removed")
    parser.add_argument("--min-faces", type=int, default=64, help="smaller groups are kept")
    parser.add_argument("--colour-step", type=float, default=0.08, help="colour merge step")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    stock = Path(pybullet_data.getDataPath()) / "franka_panda"
    out: Path = args.out
    (out / "meshes" / "visual").mkdir(parents=True, exist_ok=True)
    shutil.copytree(stock / "meshes" / "collision", out / "meshes" / "collision", dirs_exist_ok=True)
    for name in ("panda.urdf", "LICENSE.txt"):
        shutil.copy2(stock / name, out / name)
    from PIL import Image

    visual = stock / "meshes" / "visual"
    texture = np.asarray(Image.open(visual / "colors.png").convert("RGB"))
    total_before = total_after = 0
    palette: list[tuple[int, int, int]] = []
    for source in sorted(visual.glob("*.obj")):
        target = out / "meshes" / "visual" / source.name
        obj = read_obj(source)
        materials = read_mtl(visual / obj.mtllib) if obj.mtllib else {}
        before, after = write_obj(obj, target, materials, texture, palette, args)
        total_before += before
        total_after += after
        print(f"{source.name}: {before} -> {after} triangles")
    write_palette(out / "meshes" / "visual" / "palette.png", palette)
    print(f"total: {total_before} -> {total_after} triangles, {len(palette)} colours")


if __name__ == "__main__":
    main()
