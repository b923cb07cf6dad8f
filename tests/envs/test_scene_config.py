"""SceneConfig validation, YAML round trips and RoboGen conversion."""

from __future__ import annotations

import pytest

from simjudge.envs.scene import SceneConfig, SceneConfigError

BASIC = {"objects": [{"name": "Cabinet", "asset": "StorageFurniture-0", "center": [0.5, 0.5]}]}


def test_yaml_round_trip_is_equal():
    config = SceneConfig.parse(
        {
            "objects": [
                {"name": "Box", "asset": "Box-0", "center": [0.4, 0.6], "joint_init": {"joint_0": 0.5}},
                {"name": "Cube", "asset": "Cube-0", "in": "Box"},
            ]
        }
    )
    again = SceneConfig.from_yaml(config.to_yaml())
    assert again == config
    assert again.object("Cube").inside == "Box"


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"center": [1.5, 0.2]}, "scene.objects[0].center"),
        ({"colour": "red"}, "unknown key"),
        ({"joint_init": {"joint_0": 2.0}}, "fraction of the joint range"),
        ({"scale": -1}, "scene.objects[0].scale"),
        ({"on": "Nothing"}, "unknown object 'Nothing'"),
    ],
)
def test_errors_name_field_value_and_fix(change, fragment):
    obj = dict(BASIC["objects"][0], **change)
    with pytest.raises(SceneConfigError) as err:
        SceneConfig.parse({"objects": [obj]})
    assert fragment in str(err.value)


def test_duplicate_names_and_cycles_rejected():
    with pytest.raises(SceneConfigError, match="unique"):
        SceneConfig.parse({"objects": [BASIC["objects"][0], BASIC["objects"][0]]})
    with pytest.raises(SceneConfigError, match="cycle"):
        SceneConfig.parse(
            {
                "objects": [
                    {"name": "A", "asset": "Cube-0", "on": "B"},
                    {"name": "B", "asset": "Cube-1", "on": "A"},
                ]
            }
        )


def test_robogen_config_is_converted():
    robogen = """
- use_table: true
- center: (0.3, 0.5, 0)
  lang: a common storage furniture
  name: StorageFurniture
  on_table: true
  size: 0.6
  type: urdf
- center: (0.6, 0.2, 0)
  lang: a small cube
  name: Cube
  type: mesh
  movable: true
- spatial_relationships:
  - on, Cube, table
  set_joint_angle_object_name: StorageFurniture
  task_description: open the drawer
"""
    config = SceneConfig.from_yaml(robogen)
    assert [o.name for o in config.objects] == ["StorageFurniture", "Cube"]
    assert config.object("StorageFurniture").center == (0.3, 0.5)
    assert config.object("Cube").fixed is False
    assert config.table is True


def test_randomized_flag():
    assert not SceneConfig.parse(BASIC).is_randomized
    free = {"objects": [{"name": "Cube", "asset": "Cube-0"}]}
    assert SceneConfig.parse(free).is_randomized
