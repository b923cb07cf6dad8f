"""``import_robogen(task_dir) -> (Solution, ImportReport)``: RoboGen's tasks, runnable.

The conversion, step by step (each step's choices land in the report):

1. read the folder (:mod:`~simjudge.pipelines.robogen.reader`): the scene YAML, the substep
   lists, and each class file's ``_compute_reward`` or ``execute`` body;
2. find every object, link and joint name the substep code uses
   (:mod:`~simjudge.pipelines.robogen.rewrite`) and gather what the task says each part is;
3. choose a catalogue instance per object and map its parts by meaning
   (:mod:`~simjudge.pipelines.robogen.parts`; categories in
   :mod:`~simjudge.pipelines.robogen.categories`), and rename the names in the code;
4. convert the scene (:mod:`~simjudge.pipelines.robogen.scene`);
5. compile every substep in simjudge's sandbox, so that a task that converts also runs.

Everything a task needs that simjudge cannot give is a :class:`RobogenImportError`
whose message names the substep, the file or the object and says why.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from simjudge.envs.catalogue import AssetCatalogue, default_catalogue
from simjudge.envs.codegen import GeneratedCodeError, compile_once
from simjudge.envs.scene import SceneConfig, SceneConfigError
from simjudge.envs.state_api import STATE_API
from simjudge.tasks.spec import Solution, SolutionError, Subtask

from .categories import (
    CATEGORY_MAP,
    STAND_IN_REASONS,
    UNSUPPORTED_CATEGORIES,
    is_exact,
    rigid_category,
)
from .parts import ObjectMatch, PartEvidence, match_object
from .reader import RobogenImportError, RobogenTask, read_task
from .rewrite import PART_RE, NameRef, find_refs, rename
from .scene import RobogenObject, convert_scene, joint_fraction, robogen_objects

__all__ = [
    "ImportReport",
    "import_robogen",
    "load_solution_or_robogen",
    "robogen_goal",
    "solution_yaml",
]

_TABLE_NAMES = frozenset({"init_table", "table"})
_GRASP_CALLS = frozenset({"grasp_object_link", "approach_object_link", "check_grasped"})
"""Calls whose link is what suction holds: a part's handle when the catalogue has one."""


@dataclass
class ImportReport:
    """What :func:`import_robogen` did, for stdout and the solution's provenance.

    Attributes:
        task: RoboGen's task name.
        source: The task folder.
        main_object: The object the substeps act on first (the task's object).
        objects: Per object: RoboGen's category and id, the catalogue asset, whether it
            is the category itself or a stand-in (and why), and the part remaps.
        notes: What the conversion changed, one line each.
        warnings: What may not behave as RoboGen meant (absolute world coordinates, a
            part name whose object could not be told, ...).
    """

    task: str
    source: str
    main_object: str = ""
    objects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def stand_ins(self) -> list[str]:
        """Objects whose category the catalogue lacks, as ``Name (Category -> asset)``."""
        return [
            f"{o['name']} ({o['partnet_category']} -> {o['asset']})"
            for o in self.objects
            if o["match"] == "stand-in"
        ]

    @property
    def remaps(self) -> list[str]:
        """Every part remap as ``Object link_1/joint_1 -> link_2/joint_2 (knob; why)``."""
        out = []
        for obj in self.objects:
            for part in obj.get("parts", []):
                out.append(f"{obj['name']} {part['robogen']} -> {part['catalogue']} "
                           f"({part['meaning']}; {part['why']})")  # fmt: skip
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON/YAML-ready dict."""
        return {
            "task": self.task,
            "source": self.source,
            "main_object": self.main_object,
            "objects": self.objects,
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }

    def lines(self) -> list[str]:
        """The report as text lines (what ``simjudge import-robogen`` prints)."""
        out = [f"RoboGen task {self.task!r} from {self.source}"]
        for obj in self.objects:
            kind = obj["match"]
            why = f" — {obj['why']}" if obj.get("why") else ""
            out.append(
                f"  object {obj['name']}: {obj['partnet_category']}"
                f"{' ' + obj['partnet_id'] if obj.get('partnet_id') else ''} -> "
                f"{obj['asset']} ({kind}{why})"
            )
            for part in obj.get("parts", []):
                flag = "" if part["by_meaning"] else " [no part of that meaning; nearest by motion]"
                out.append(
                    f"    remap {part['robogen']} -> {part['catalogue']} "
                    f"({part['meaning']}: {part['why']}){flag}"
                )
        out += [f"  note: {n}" for n in self.notes]
        out += [f"  WARNING: {w}" for w in self.warnings]
        return out


def import_robogen(
    task_dir: str | Path,
    *,
    strict: bool = False,
    distractors: bool = False,
    catalogue: AssetCatalogue | None = None,
) -> tuple[Solution, ImportReport]:
    """Convert a RoboGen task folder into a :class:`~simjudge.tasks.spec.Solution`.

    Args:
        task_dir: RoboGen's example folder (``example_tasks/<Task>``), its
            ``task_<Task>`` folder, or the task YAML.
        strict: Refuse stand-ins: an object whose category the catalogue lacks (see
            :data:`~simjudge.pipelines.robogen.categories.CATEGORY_MAP`) or whose parts no
            instance of its own category has.
        distractors: Also place the objects of RoboGen's distractor YAML (off by default:
            they are Objaverse meshes that only become cubes and cylinders here).
        catalogue: The asset catalogue (default: the packaged one).

    Returns:
        The solution (its ``provenance["robogen"]`` holds the report) and the report.

    Raises:
        RobogenImportError: The task cannot be converted; the message says why.
    """
    catalogue = catalogue or default_catalogue()
    task = read_task(task_dir)
    report = ImportReport(task=task.name, source=str(Path(task_dir)))
    return _Converter(task, report, catalogue, strict, distractors).run()


class _Converter:
    def __init__(self, task: RobogenTask, report: ImportReport, catalogue: AssetCatalogue,
                 strict: bool, distractors: bool) -> None:  # fmt: skip
        self.task, self.report, self.catalogue = task, report, catalogue
        self.strict, self.with_distractors = strict, distractors
        self.meta: dict[str, Any] = {}
        for entry in task.entries:
            if not ("name" in entry and ("type" in entry or "path" in entry)):
                self.meta.update(entry)
        self.objects = robogen_objects(task.entries)
        if not self.objects:
            raise RobogenImportError(f"{task.config_path.name} lists no objects")
        seen: dict[str, str] = {}
        for obj in self.objects:
            if obj.name.lower() in seen:
                raise RobogenImportError(
                    f"objects {seen[obj.name.lower()]!r} and {obj.name!r} differ only by case; "
                    "RoboGen lower-cases names, so they would be one object"
                )
            seen[obj.name.lower()] = obj.name
        self.distractors = []
        for obj in robogen_objects(task.distractor_entries, distractor=True):
            if obj.name.lower() in seen:  # RoboGen would overwrite the first; keep the task's
                continue
            seen[obj.name.lower()] = obj.name
            self.distractors.append(obj)
        self.lookup = {o.name.lower(): o.name for o in self.objects}
        self.urdf = [o.name for o in self.objects if o.is_urdf]
        self.refs: list[list[NameRef]] = []
        self.parts: dict[str, dict[int, PartEvidence]] = defaultdict(dict)
        self.matches: dict[str, ObjectMatch] = {}
        self._dropped_returns = 0

    # -- the steps ---------------------------------------------------------------------------
    def run(self) -> tuple[Solution, ImportReport]:
        for i, sub in enumerate(self.task.substeps):
            try:
                self.refs.append(find_refs(sub.code, self.lookup, self.urdf))
            except SyntaxError as exc:
                raise RobogenImportError(
                    f"substep {i + 1} {sub.name!r} ({sub.path.name}): the extracted code does "
                    f"not parse ({exc.msg}, line {exc.lineno})"
                ) from None
            dropped = [n for n in sub.notes if n.startswith("dropped RoboGen's closing")]
            if dropped:
                self._dropped_returns += 1
            self.report.notes += [f"substep {i + 1} {sub.name!r}: {n}" for n in sub.notes
                                  if n not in dropped]  # fmt: skip
        if self._dropped_returns:
            self.report.notes.append(
                f"{self._dropped_returns} primitive substep(s): RoboGen's closing `return rgbs, "
                "final_state, success` dropped (a primitive block ends by assigning `success`)"
            )
        self._check_object_names()
        self._gather_evidence()
        self._choose_assets()
        self._joint_init()
        subtasks = self._subtasks()
        scene = self._scene()
        provenance = {
            "proposer": "robogen-import",
            "source": "RoboGen task folder",
            "task_dir": str(self.task.root),
            "robogen": self.report.to_dict(),
        }
        try:
            solution = Solution.parse(
                {
                    "task": self.task.name,
                    "description": self.task.description,
                    "scene": scene.model_dump(mode="json", by_alias=True),
                    "subtasks": [s.model_dump() for s in subtasks],
                    "provenance": provenance,
                }
            )
        except SolutionError as exc:
            raise RobogenImportError(f"the converted solution is invalid: {exc}") from None
        return solution, self.report

    def _check_object_names(self) -> None:
        for sub, refs in zip(self.task.substeps, self.refs, strict=True):
            for ref in refs:
                if ref.kind != "object" or ref.obj is not None:
                    continue
                if ref.value.lower() in _TABLE_NAMES:
                    continue
                raise RobogenImportError(
                    f"substep {sub.name!r} ({sub.path.name}) line {ref.line}: {ref.call}() names "
                    f"object {ref.value!r}, which the task's YAML does not have (objects: "
                    f"{[o.name for o in self.objects]})"
                )
        for sub, refs in zip(self.task.substeps, self.refs, strict=True):
            for ref in refs:
                if ref.kind == "object" and ref.obj is None and ref.value.lower() == "table":
                    self.report.warnings.append(
                        f"substep {sub.name!r} names 'table'; RoboGen's table is 'init_table'"
                    )

    def _part(self, obj: str, index: int) -> PartEvidence:
        parts = self.parts[obj]
        if index not in parts:
            parts[index] = PartEvidence(obj, index)
        return parts[index]

    def _aliases(self) -> dict[str, dict[int, int]]:
        """``joint_M connects link_K`` in a comment: joint M moves part K (per object)."""
        aliases: dict[str, dict[int, int]] = defaultdict(dict)
        for sub, refs in zip(self.task.substeps, self.refs, strict=True):
            owners = {r.obj for r in refs if r.kind in ("link", "joint") and r.obj}
            if len(owners) != 1:
                continue
            owner = owners.pop()
            used_links = {int(r.value.split("_")[1]) for r in refs
                          if r.kind == "link" and r.obj == owner}  # fmt: skip
            for m, k in re.findall(r"joint_(\d+)\s+connects\s+link_(\d+)", sub.source):
                if int(m) != int(k) and int(m) not in used_links:
                    aliases[owner][int(m)] = int(k)
        return aliases

    def _gather_evidence(self) -> None:
        aliases = self._aliases()
        for i, (sub, refs) in enumerate(zip(self.task.substeps, self.refs, strict=True)):
            touched = self._code_evidence(i, sub, refs, aliases)
            for obj, indices in touched.items():
                for index in indices:
                    self.parts[obj][index].add_text(sub.name, 3.0 / len(indices),
                                                    f"substep '{sub.name}'")  # fmt: skip
            self._comment_evidence(sub.source, touched, aliases)
        for text in self.meta.get("spatial_relationships") or []:
            bits = [b.strip() for b in str(text).split(",")]
            if len(bits) == 4 and bits[2].lower() in self.lookup and PART_RE.match(bits[3]):
                parent = self.lookup[bits[2].lower()]
                if parent in self.urdf:
                    part = self._part(parent, int(bits[3].split("_")[1]))
                    part.links.add(bits[3].lower())
                    part.add_text("body", 1.0, f"relation '{text}'")
        for obj in self.objects:
            context = f"{obj.lang} {self.task.name} {self.task.description}"
            for part in self.parts.get(obj.name, {}).values():
                part.add_text(context, 0.3)

    def _code_evidence(self, i: int, sub, refs: list[NameRef], aliases) -> dict[str, set[int]]:
        """Parts named in one substep's code; returns object -> part indices it touched."""
        touched: dict[str, set[int]] = defaultdict(set)
        for ref in refs:
            if ref.kind not in ("link", "joint"):
                continue
            if ref.obj is None:
                self.report.warnings.append(
                    f"substep {i + 1} {sub.name!r} line {ref.line}: cannot tell which "
                    f"object {ref.value!r} belongs to; left as written"
                )
                continue
            if ref.obj not in self.urdf:
                continue
            index = int(PART_RE.match(ref.value.lower()).group(2))  # type: ignore[union-attr]
            if ref.kind == "joint":
                index = aliases[ref.obj].get(index, index)
            part = self._part(ref.obj, index)
            (part.joints if ref.kind == "joint" else part.links).add(ref.value.lower())
            if ref.kind == "joint" and ref.call:
                part.needs_joint = True
            if ref.target:
                names = ", ".join(ref.target)
                part.add_text(" ".join(ref.target), 2.0, f"`{names} = {ref.call or '...'}`")
            touched[ref.obj].add(index)
        return touched

    def _comment_evidence(self, source: str, touched: dict[str, set[int]], aliases) -> None:
        if len(touched) != 1:
            return
        (obj, indices), = touched.items()
        for comment in re.findall(r"#(.*)$", source, re.M):
            for sentence in re.split(r"(?<=[.;])\s+", comment):
                for kind, number in re.findall(r"\b(link|joint)_(\d+)\b", sentence):
                    index = int(number)
                    if kind == "joint":
                        index = aliases[obj].get(index, index)
                    if index in indices:
                        short = " ".join(sentence.split())[:90]
                        self.parts[obj][index].add_text(sentence, 2.0, f"comment '{short}'")

    def _category(self, obj: RobogenObject) -> str:
        names = {k.lower(): k for k in CATEGORY_MAP}
        for text in (obj.name, Path(str(obj.entry.get("path", ""))).stem):
            key = re.sub(r"[^a-z]", "", text.lower())
            if key in names:
                return names[key]
        words = set(re.findall(r"[a-z]+", obj.lang.lower()))
        for key, name in names.items():
            if key in words:
                return name
        unsupported = {c.lower(): c for c in UNSUPPORTED_CATEGORIES}
        key = re.sub(r"[^a-z]", "", obj.name.lower())
        if key in unsupported:
            raise RobogenImportError(
                f"object {obj.name!r}: PartNet-Mobility's {unsupported[key]} has no catalogue "
                "category and no stand-in whose parts move like it; the task cannot run here"
            )
        raise RobogenImportError(
            f"object {obj.name!r} ({obj.lang!r}): not a PartNet-Mobility category simjudge "
            f"knows; known: {sorted(CATEGORY_MAP)}"
        )

    def _choose_assets(self) -> None:
        rigid_used: dict[str, int] = defaultdict(int)
        objects = self.objects + (self.distractors if self.with_distractors else [])
        if self.distractors and not self.with_distractors:
            self.report.notes.append(
                f"{len(self.distractors)} distractor(s) of "
                f"{self.task.distractor_path.name if self.task.distractor_path else '?'} "
                "not placed (Objaverse meshes; pass distractors=True / --distractors to add "
                "stand-ins)"
            )
        for obj in objects:
            row: dict[str, Any] = {"name": obj.name, "lang": obj.lang,
                                   "robogen_size_m": obj.entry.get("size")}  # fmt: skip
            rigid = not obj.is_urdf
            if obj.is_urdf:
                try:
                    self._choose_articulated(obj, row)
                except RobogenImportError:
                    if not obj.distractor:
                        raise
                    rigid = True  # a distractor only decorates: any rigid stand-in will do
            if rigid:
                category = rigid_category(obj.name, obj.lang)
                entries = self.catalogue.by_category(category)
                entry = entries[rigid_used[category] % len(entries)]
                rigid_used[category] += 1
                obj.asset = entry.asset_id
                what = "an Objaverse mesh" if not obj.is_urdf else "a distractor with no stand-in"
                row.update(partnet_category="mesh" if not obj.is_urdf else "?", partnet_id="",
                           asset=entry.asset_id, match="stand-in",
                           why=f"{what}; a rigid {category}")  # fmt: skip
            obj.fixed = not bool(obj.entry.get("movable")) if obj.is_urdf and not rigid else False
            row["fixed"] = obj.fixed
            self.report.objects.append(row)

    def _choose_articulated(self, obj: RobogenObject, row: dict[str, Any]) -> None:
        category = self._category(obj)
        cats = CATEGORY_MAP[category]
        exact = is_exact(category)
        if self.strict and not exact:
            raise RobogenImportError(
                f"object {obj.name!r}: the catalogue has no {category} (strict mode refuses "
                f"stand-ins; without --strict it would use {' or '.join(cats)}: "
                f"{STAND_IN_REASONS.get(category, '')})"
            )
        parts = [] if obj.distractor else sorted(self.parts.get(obj.name, {}).values(),
                                                  key=lambda p: p.index)  # fmt: skip
        if self.strict:
            cats = (category,)
        match = match_object(parts, cats, self.catalogue, what=f"object {obj.name!r}")
        loose = [p for p in match.parts if not p.by_meaning]
        if self.strict and loose:
            raise RobogenImportError(
                f"object {obj.name!r}: no {category} in the catalogue has a part that means "
                f"{', '.join(p.evidence.best_meaning or p.evidence.label for p in loose)} "
                "(strict mode refuses stand-ins and parts matched by motion only)"
            )
        self.matches[obj.name] = match
        obj.asset = match.entry.asset_id
        used_exact = match.entry.category == category
        why = "" if used_exact else STAND_IN_REASONS.get(category, "")
        if exact and not used_exact:
            why = (f"no {category} in the catalogue has "
                   f"{', '.join(p.evidence.best_meaning or p.evidence.label for p in match.parts)}")  # fmt: skip
        row.update(
            partnet_category=category,
            partnet_id=str(obj.entry.get("reward_asset_path", "") or ""),
            asset=match.entry.asset_id,
            match="exact" if used_exact else "stand-in",
            why=why,
            parts=[self._part_row(p) for p in match.parts],
        )
        for part in match.parts:
            if not part.by_meaning:
                self.report.warnings.append(
                    f"{obj.name} {part.evidence.label}: no part of {match.entry.asset_id} means "
                    f"{part.evidence.best_meaning or 'what the task says'}; mapped to "
                    f"{part.candidate.text} by motion"
                )

    @staticmethod
    def _part_row(part) -> dict[str, Any]:
        ev, cand = part.evidence, part.candidate
        names = [cand.link] * bool(ev.links) + [cand.joint] * bool(ev.joints and cand.joint)
        target = "/".join(n for n in names if n) or cand.link
        if cand.grip is not None and ev.links:
            target += f" (grasps: {cand.grip})"
        return {
            "robogen": ev.label,
            "catalogue": target,
            "meaning": cand.text,
            "why": "; ".join(ev.why[:3]) or "no evidence; first free part",
            "by_meaning": part.by_meaning,
            "renames": part.renames(),
        }

    def _joint_init(self) -> None:
        entries = [e for e in self.task.entries if "set_joint_angle_object_name" in e]
        for entry in entries:
            name = str(entry["set_joint_angle_object_name"]).lower()
            if name not in self.lookup:
                raise RobogenImportError(
                    f"set_joint_angle_object_name {entry['set_joint_angle_object_name']!r} is "
                    f"not an object of the task (objects: {[o.name for o in self.objects]})"
                )
            obj = next(o for o in self.objects if o.name == self.lookup[name])
            renames = self.matches[obj.name].renames if obj.name in self.matches else {}
            for key, value in entry.items():
                if not PART_RE.match(str(key)):
                    continue
                joint = renames.get(str(key).lower())
                if joint is None:
                    self.report.notes.append(
                        f"{obj.name} {key}: {value!r} dropped (no substep uses that part, or "
                        f"its stand-in part has no joint)"
                    )
                    continue
                fraction, note = joint_fraction(value)
                obj.joint_init[joint] = fraction
                change = f" ({note})" if note else ""
                self.report.notes.append(
                    f"{obj.name} initial {key} = {value!r} -> {joint} = {fraction!r}{change}"
                )

    def _scene(self) -> SceneConfig:
        objects = self.objects + (self.distractors if self.with_distractors else [])
        main = next((o.name for o in self.objects if o.name in self.parts), None)
        self.report.main_object = main or self.objects[0].name
        scene, notes = convert_scene(objects, self.meta, main)
        self.report.notes += notes
        for obj in objects:
            self.report.notes += [f"{obj.name}: {n}" for n in obj.notes]
        try:
            return SceneConfig.parse(scene)
        except SceneConfigError as exc:
            raise RobogenImportError(f"the converted scene is invalid: {exc}") from None

    def _subtasks(self) -> list[Subtask]:
        subtasks = []
        for i, (sub, refs) in enumerate(zip(self.task.substeps, self.refs, strict=True)):
            replacements: dict[tuple[int, int], str] = {}
            changed: dict[str, None] = {}
            for ref in refs:
                new = self._new_name(ref)
                if new is not None and new != ref.value:
                    replacements[(ref.line, ref.col)] = new
                    owner = f"{ref.obj} " if ref.kind != "object" else ""
                    changed[f"{owner}{ref.value} -> {new}"] = None
            code = rename(sub.code, replacements)
            if changed:
                header = (
                    f"# simjudge import-robogen renamed: {', '.join(changed)} "
                    "(comments keep RoboGen's names)"
                )
                code = f"{header}\n{code}"
            self._warn_absolute(i, sub.name, code)
            try:
                compile_once("primitive" if sub.kind == "primitive" else "reward", code,
                             STATE_API)
            except GeneratedCodeError as exc:
                raise RobogenImportError(
                    f"substep {i + 1} {sub.name!r} ({sub.path.name}) does not pass simjudge's "
                    f"code check: {exc}"
                ) from None
            subtasks.append(
                Subtask(
                    name=sub.name,
                    kind=sub.kind,
                    code=code,
                    action_space=sub.action_space or "delta-translation",
                    description=f"RoboGen substep {sub.path.name}",
                )
            )
        return subtasks

    def _new_name(self, ref: NameRef) -> str | None:
        """The literal's new text, or None to keep it.

        An object name passed to a call takes the scene's spelling (``"DishWasher"`` ->
        ``"Dishwasher"``); a free literal is left alone, since RoboGen compares it with the
        lower-cased names its helpers return. Part names take the catalogue's.
        """
        if ref.kind == "object":
            return ref.obj if ref.call and ref.obj is not None and ref.value != ref.obj else None
        if ref.obj is None or ref.obj not in self.matches:
            return None
        match = self.matches[ref.obj]
        if ref.kind == "link" and (ref.call in _GRASP_CALLS or not ref.call):
            # grasps, grasp checks and `grasped_link == "link_2"`: the part's handle
            return match.grasp_renames.get(ref.value.lower())
        return match.renames.get(ref.value.lower())

    def _warn_absolute(self, index: int, name: str, code: str) -> None:
        tree = ast.parse(code)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "array" and node.args \
                    and isinstance(node.args[0], ast.List | ast.Tuple) \
                    and len(node.args[0].elts) == 3 \
                    and all(_number(e) is not None for e in node.args[0].elts) \
                    and any(_number(e) for e in node.args[0].elts):  # fmt: skip
                self.report.warnings.append(
                    f"substep {index + 1} {name!r} line {node.lineno}: "
                    f"`{ast.unparse(node)}` is a position in RoboGen's world frame (floor at "
                    "z = 0, robot at (1, 1)); simjudge's frame differs (table top at z = 0, "
                    "robot at (-0.6, 0)), so this target is not where RoboGen meant"
                )
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) \
                    and re.search(r"height|location|position", node.targets[0].id) \
                    and (_number(node.value) or 0) >= 0.3:  # fmt: skip
                self.report.warnings.append(
                    f"substep {index + 1} {name!r} line {node.lineno}: "
                    f"`{ast.unparse(node)}` is an absolute coordinate in RoboGen's world frame "
                    "(floor at z = 0); in simjudge's the table top is z = 0"
                )


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
            and not isinstance(node.value, bool):  # fmt: skip
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    return None


def robogen_goal(solution: Solution) -> Any:
    """The task goal of a converted RoboGen solution, derived from the task's own words.

    :func:`~simjudge.tasks.spec.derive_goal` reads RoboGen's task name and description
    against the main object's catalogue instance and the task's scene (converted from
    RoboGen's YAML, not proposed), never the substep code. Returns the
    :class:`~simjudge.tasks.spec.goal_parser.GoalDerivation` (its ``goal`` is None when the
    words are ambiguous), or None for a solution that was not converted from RoboGen.
    """
    from simjudge.tasks.spec import derive_goal

    info = solution.provenance.get("robogen")
    if not isinstance(info, dict):
        return None
    name = info.get("main_object") or solution.scene.objects[0].name
    asset = solution.scene.object(name).asset
    resolved = _resolved_joints(info, name)
    names = tuple(o.name for o in solution.scene.objects)
    return derive_goal(solution.task, robogen_words(solution.description, names), asset, name,
                       solution.scene, resolved=resolved)


_FRAMING = (
    (r"^\s*the (?:robot(?:ic)? arm|robot|arm)(?: will| needs to| is tasked with| is to)?\s+",
     ""),
    (r"\b(?:in order to|so as to|so that|causing|to (?:begin|start|set|adjust|change|enlarge|"
     r"preserve|display|unlock|lock|allow|let|make|get|dispense|access|pull|push|reveal|use|"
     r"see|check|show|heat|cook|wash|brew|fill|empty|enjoy|prepare|keep|stop|turn on|turn off)"
     r")\b[^,.;]*", ""),
)


_PROCEDURE = (
    # RoboGen's explanation of how ("This task involves moving towards the oven door and
    # applying force to close it"): the procedure, not the end state; its folder names join
    # the sentences without a full stop, so it runs to the end of the sentence
    (r"\b(?:this|the) (?:task|substep)? ?involves\b[^.;]*", ""),
    (r"\bafter use\b", ""),
    # the means ("turns off the faucet by rotating one of the hinge switches"): the main
    # clause states the end state; the part is the one the converter mapped
    (r",?\s*\bby (?:\w+ing)\b[^,.;]*", ""),
    # "uses the prismatic joint to slide the drawer out": the instrument, then the action
    (r"\buses? (?:the|a|its) [^,.;]*? to\s+", ""),
    # RoboGen names joint types as the tree does ("the slider button"): a part that slides
    (r"\bslider (?=\w)", "sliding "),
)


def robogen_words(description: str, names: tuple[str, ...] = ()) -> str:
    """RoboGen's description without its framing and purposes, for the goal reader.

    RoboGen writes "The robotic arm will close the window to preserve indoor temperature":
    the subject ("the robotic arm will") and the purpose ("to preserve ...", "in order to
    ...") say who and why, not which joint ends where, so they are dropped; so are its
    procedure sentences ("This task involves moving towards ..."), means clauses ("by
    rotating ...") and instruments ("uses the prismatic joint to ..."), which say how.
    Everything else is read as written (an unknown word still refuses). ``names`` are the scene's object
    names (``Suitcase``), whose apostrophe-less possessives are read too.
    """
    text = re.sub(r"^\s*after [^,.;]*,\s*", "", description, flags=re.IGNORECASE)
    for pattern, repl in _FRAMING + _PROCEDURE:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    return _possessives(re.sub(r"\s+", " ", text).strip(), names)


def _possessives(text: str, names: tuple[str, ...] = ()) -> str:
    """RoboGen's possessives without the apostrophe: "the trashcans lid" -> "the trashcan lid".

    Only a word whose stem names an object (a category word) and that stands before a part
    word loses its "s"; any other word is left for the reader (which refuses what it cannot
    read).
    """
    from simjudge.tasks.spec.goal_vocab import CATEGORY_WORDS
    from simjudge.tasks.spec.goal_words import PART_WORDS

    objects = {w for words in CATEGORY_WORDS.values() for w in words} | {"trashcan"}
    objects |= {w.lower() for name in names for w in re.findall(r"[A-Za-z]+", name)}

    def fix(match: re.Match[str]) -> str:
        stem, part = match.group(1), match.group(3)
        if stem.lower() in objects and part.lower() in PART_WORDS:
            return f"{stem} {part}"
        return match.group(0)

    return re.sub(r"\b([A-Za-z]+?)('?)s\s+(\w+)\b", fix, text)


def _resolved_joints(info: dict, name: str) -> dict[str, list[str]]:
    """Semantic -> the main object's joints the converter mapped RoboGen's parts onto.

    The converter already read which part the task is about (substep names, code, comments);
    where the task's words fit several parts, the reader takes the one it mapped.
    """
    out: dict[str, list[str]] = {}
    for obj in info.get("objects", []):
        if obj.get("name") != name:
            continue
        for part in obj.get("parts", []):
            meaning = str(part.get("meaning", "")).split(" (")[0].split()
            target = str(part.get("catalogue", "")).split(" ")[0]
            if "/" in target and len(meaning) >= 2:
                out.setdefault(meaning[-1], []).append(target.split("/")[1])
    return out


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (code) as literal blocks, so the YAML reads like the code."""


def _str_block(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_block)


def solution_yaml(solution: Solution, report: ImportReport | None = None) -> str:
    """The converted solution as YAML (defaults left out), headed by the report.

    :meth:`Solution.from_yaml` reads it back to an equal solution.
    """
    data = solution.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["scene"] = solution.scene.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["subtasks"] = [
        {"name": s.name, "kind": s.kind, **s.model_dump(mode="json", exclude_defaults=True)}
        for s in solution.subtasks
    ]
    head = ""
    if report is not None:
        head = "".join(f"# {line}\n" for line in report.lines())
        head = f"# Converted by `simjudge import-robogen`.\n{head}"
    return head + yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, width=100,
                            allow_unicode=True)  # fmt: skip


def load_solution_or_robogen(source: str | Path, **kwargs: Any) -> Solution:
    """A solution from a YAML file, a built-in task id, or a RoboGen task folder.

    Where a solution is accepted (``simjudge execute``), a RoboGen task folder is
    converted on the fly (:func:`import_robogen`; ``kwargs`` go to it) and its report
    printed by the caller from ``solution.provenance["robogen"]``.

    Raises:
        RobogenImportError: A RoboGen folder that cannot be converted.
        FileNotFoundError: Neither a file, a folder nor a built-in task.
    """
    from simjudge.tasks.spec import load_solution

    from .reader import is_robogen_task_dir

    path = Path(source)
    if path.is_dir():
        if is_robogen_task_dir(path) or any(path.glob("*.yaml")):
            return import_robogen(path, **kwargs)[0]
        raise FileNotFoundError(
            f"{path} is a folder but not a RoboGen task folder (no substeps.txt in it or in "
            "a task_* subfolder); give a solution YAML, a built-in task id or a RoboGen folder"
        )
    return load_solution(source)
