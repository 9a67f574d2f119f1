"""The wire never pairs a list with a mapping of items by position.

A JSON object's keys reach the daemon in the sender's map order (a Lua table's hash order), so
the daemon refuses ``labels``, ``cluster`` or ``split`` given as a list beside ``items`` given as
a mapping; the Python client, whose dicts keep their order, sends such lists keyed by item id.
(Neovim's side: ``tests/clients/test_editors.py``.)
"""

from __future__ import annotations

import msgspec
import pytest

from hrbench_client import protocol as p
from hrbench_client.client import keyed_reference
from hrbench_client.errors import ReferenceValueError
from tests.server._daemon import Daemon

CAPITALS = {"France": "Paris", "Peru": "Lima", "Chad": "N'Djamena", "Fiji": "Suva"}


def _spec(reference: object) -> dict[str, object]:
    replies = {f"Capital of {c}?": cap for c, cap in CAPITALS.items()}
    return {
        "arms": [{"kind": "prompt", "name": "ask", "template": "Capital of {item}?"}],
        "reference": reference,
        "client": {"kind": "mock", "replies": replies, "default": "I do not know"},
        "runs": 1,
    }


# the keys in the order an unordered map might send them; the lists in the order the author meant
ITEMS = {"q3": "Chad", "q1": "France", "q4": "Fiji", "q2": "Peru"}
MEANT = ["Paris", "Lima", "N'Djamena", "Suva"]  # q1, q2, q3, q4


@pytest.mark.parametrize(
    ("field", "value"),
    [("labels", MEANT), ("cluster", ["a", "a", "b", "b"]), ("split", ["test", "test", "dev", "test"])],
)
def test_a_list_beside_a_mapping_of_items_is_refused_on_the_wire(
    shared_daemon: Daemon, field: str, value: list[str]
) -> None:
    ref = {
        "items": ITEMS,
        "labels": {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena", "q4": "Suva"},
        field: value,
    }
    with shared_daemon.client() as c:
        before = len(c.benchmarks())
        for method, params in (
            ("benchmark", _spec(ref)),
            ("reference/put", {"reference": ref, "name": "pos"}),
        ):
            with pytest.raises(ReferenceValueError) as got:
                c.call(method, params)  # as a client with unordered maps sends it: no conversion
            msg = got.value.message
            assert msg.startswith(f"reference.{field}: a list is not paired by position with `items`"), msg
            assert "RFC 8259" in msg and "Lua table" in msg
            word = {"labels": "label", "cluster": "cluster", "split": "split"}[field]
            assert f'key it by item id, "{field}": {{"q3": <{word} of q3>, "q1": <{word} of q1>, ...}}' in msg
            assert got.value.field == f"reference.{field}"
        assert len(c.benchmarks()) == before  # refused before anything was stored
        assert all(r.name != "pos" for r in c.references.list())
        assert c.score("paris", label="Paris").correct is True  # and the daemon keeps serving


def test_every_list_is_named_and_one_item_is_no_exception(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        with pytest.raises(ReferenceValueError) as got:
            c.call("reference/put", {"reference": {"items": ITEMS, "labels": MEANT, "split": ["test"] * 4}})
        assert "(nor may `split`)" in got.value.message
        assert '"labels": {"q3": <label of q3>' in got.value.message
        assert '"split": {"q3": <split of q3>' in got.value.message
        # one item: the rule does not change with the count of items
        with pytest.raises(ReferenceValueError, match="reference.labels: a list is not paired"):
            c.call("reference/put", {"reference": {"items": {"q1": "France"}, "labels": ["Paris"]}})


def test_keyed_forms_and_lists_beside_a_list_of_items_are_taken(shared_daemon: Daemon) -> None:
    keyed = {
        "items": ITEMS,
        "labels": {"q2": "Lima", "q1": "Paris", "q4": "Suva", "q3": "N'Djamena"},
        "cluster": {"q1": "a", "q2": "a", "q3": "b", "q4": "b"},
        "split": "test",
    }
    with shared_daemon.client() as c:
        result = c.call("benchmark", _spec(keyed))  # raw: sent as it is
        assert result["summary"][0]["accuracy"] == 1.0
        listed = c.call(
            "reference/put", {"reference": {"items": list(CAPITALS), "labels": list(CAPITALS.values())}}
        )
        got = c.references.get(listed["hash"])
        assert got.items == dict(zip(["1", "2", "3", "4"], CAPITALS, strict=True))
        assert got.labels == dict(zip(["1", "2", "3", "4"], CAPITALS.values(), strict=True))


def test_the_python_client_sends_a_dicts_lists_keyed_by_id(shared_daemon: Daemon) -> None:
    items = {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"}  # a dict: its order is the author's
    ref = {
        "items": items,
        "labels": MEANT,
        "cluster": ["a", "a", "b", "b"],
        "split": ["test", "test", "test", "dev"],
    }
    before = {k: (list(v) if isinstance(v, list) else dict(v)) for k, v in ref.items()}
    with shared_daemon.client() as c:
        rows = list(c.benchmark(_spec(ref)))
        assert {r.item: (r.correct, r.cluster, r.split) for r in rows} == {
            "q1": (True, "a", "test"),
            "q2": (True, "a", "test"),
            "q3": (True, "b", "test"),
        }  # q4 is on dev: not run on the default split `test`
        assert ref == before  # the caller's spec is not changed
        info = c.references.put(ref, name="dict-order")
        stored = c.references.get("dict-order")
        assert stored.labels == {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena", "q4": "Suva"}
        assert stored.cluster == {"q1": "a", "q2": "a", "q3": "b", "q4": "b"}
        assert stored.split == {"q1": "test", "q2": "test", "q3": "test", "q4": "dev"}
        # the wire Structs too: a ReferenceSpec and a BenchmarkParams holding one
        struct = p.ReferenceSpec(items=items, labels=MEANT, cluster=["a", "a", "b", "b"], split=ref["split"])
        assert c.references.put(struct).hash == info.hash
        params = msgspec.structs.replace(
            msgspec.convert(_spec("dict-order"), p.BenchmarkParams), reference=struct
        )
        assert {r.item: r.correct for r in c.benchmark(params)} == dict.fromkeys(["q1", "q2", "q3"], True)


# an author's dict whose order is not its ids' sorted order, the lists in that same order
AUTHOR = {"q3": "Chad", "q1": "France", "q4": "Fiji", "q2": "Peru"}
AUTHOR_LABELS = ["N'Djamena", "Paris", "Suva", "Lima"]


def test_the_lists_pair_with_the_dicts_own_order_not_its_sorted_ids() -> None:
    ref = {"items": AUTHOR, "labels": AUTHOR_LABELS, "cluster": ["b", "a", "b", "a"]}
    sent = keyed_reference({"reference": ref})["reference"]
    assert sent["labels"] == {"q3": "N'Djamena", "q1": "Paris", "q4": "Suva", "q2": "Lima"}
    assert sent["cluster"] == {"q3": "b", "q1": "a", "q4": "b", "q2": "a"}
    struct = keyed_reference(p.ReferenceSpec(items=AUTHOR, labels=AUTHOR_LABELS))
    assert struct.labels == sent["labels"]


def test_a_dict_in_its_authors_order_scores_every_item_right_through_the_daemon(
    shared_daemon: Daemon,
) -> None:
    with shared_daemon.client() as c:
        rows = list(c.benchmark(_spec({"items": AUTHOR, "labels": AUTHOR_LABELS})))
        assert {r.item: (r.correct, r.outcome) for r in rows} == {
            "q1": (True, "paris"),
            "q2": (True, "lima"),
            "q3": (True, "n'djamena"),
            "q4": (True, "suva"),
        }  # France is not given Lima


def test_a_list_of_the_wrong_length_is_refused_before_sending() -> None:
    with pytest.raises(ReferenceValueError) as got:
        keyed_reference({"reference": {"items": {"q1": "France", "q2": "Peru"}, "labels": ["Paris"]}})
    assert got.value.field == "reference.labels"
    assert got.value.message.startswith(
        "reference.labels: 1 value for 2 items; a list gives one value per item"
    )
    # what needs no keying is sent as it is
    for spec in ({"reference": "caps"}, {"resume": "abc"}, {"reference": {"items": ["a"], "labels": ["b"]}}):
        assert keyed_reference(spec) is spec
    one = {"items": {"q1": "France"}, "labels": {"q1": "Paris"}, "cluster": "a", "split": "dev"}
    assert keyed_reference(one) is one
