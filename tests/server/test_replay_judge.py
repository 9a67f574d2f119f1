"""A ``replay`` judge in a spec run through the daemon reads the daemon's store.

The arm is an ``outputs`` arm (outputs made elsewhere, the judge's usual use), so the recording
holds the judge's requests alone.
"""

from __future__ import annotations

import uuid

from tests.server._daemon import Daemon, spec


def test_a_replay_judge_grades_from_a_recording_in_the_daemons_store(shared_daemon: Daemon) -> None:
    rec = f"grades-{uuid.uuid4().hex[:8]}"
    arms = [{"kind": "outputs", "name": "made", "outputs": {f"q{i}": f"answer item{i}" for i in range(3)}}]
    with shared_daemon.client() as c:
        live = {"client": {"kind": "mock", "reply": "CORRECT"}}
        first = list(
            c.benchmark(
                spec(
                    n=3,
                    runs=1,
                    arms=arms,
                    client=None,
                    scorer="judge",
                    scorer_settings=live,
                    record=rec,
                    cache=False,
                )
            )
        )
        replayed = {"client": {"kind": "replay", "recording": rec}}
        stream = c.benchmark(
            spec(n=3, runs=1, arms=arms, client=None, scorer="judge", scorer_settings=replayed, cache=False)
        )
        again = list(stream)
    assert stream.result is not None and stream.result.status == "done"
    assert len(first) == len(again) == 3
    assert all(r.correct is True for r in first)
    assert sorted((r.item, r.run, r.correct) for r in again) == sorted(
        (r.item, r.run, r.correct) for r in first
    )
