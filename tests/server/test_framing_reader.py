"""FrameReader in-process over a real asyncio.StreamReader: framing holds however bytes arrive."""

from __future__ import annotations

import asyncio
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hrbench_server.framing import Fault, FrameReader
from tests.server._wire import frame, score


def _read_all(data: bytes, cuts: list[int], *, stall_s: float = 0.05) -> list[bytes | Fault]:
    """Feed ``data`` cut at ``cuts`` (one chunk per event-loop turn), then EOF; every item read."""

    async def main() -> list[bytes | Fault]:
        reader = asyncio.StreamReader()
        frames = FrameReader(reader, 1 << 20, stall_s=stall_s)

        async def feed() -> None:
            last = 0
            for cut in sorted(set(cuts)) + [len(data)]:
                reader.feed_data(data[last:cut])
                last = cut
                await asyncio.sleep(0)
            reader.feed_eof()

        task = asyncio.create_task(feed())
        out: list[bytes | Fault] = []
        while (got := await frames.next()) is not None:
            out.append(got)
        await task
        return out

    return asyncio.run(main())


_bodies = st.lists(
    st.builds(
        lambda i, text: json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "score", "params": {"output": text}}
        ).encode(),
        st.integers(0, 10**9),
        st.text(max_size=30),
    ),
    min_size=1,
    max_size=6,
)


@given(bodies=_bodies, data=st.data(), content_type=st.booleans())
@settings(max_examples=150, deadline=None)
def test_valid_frames_come_out_whole_however_they_are_cut(
    bodies: list[bytes], data: st.DataObject, content_type: bool
) -> None:
    extra = {"Content_Type": "application/vscode-jsonrpc; charset=utf-8"} if content_type else {}
    wire = b"".join(frame(b, **extra) for b in bodies)
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=12))
    assert _read_all(wire, cuts) == bodies


_faults = st.sampled_from(
    [
        b"Content-Type: x\r\n\r\n" + score(5),
        b"Content-Length: nope\r\n\r\n" + score(5),
        b"Content-Length: -3\r\n\r\n" + score(5),
        score(5) + b"\n",
        b"garbage line\r\n",
        b"X-Long: " + b"a" * 10_000 + b"\r\n" + frame(score(5)),
        b"Content-Length: %d\r\n\r\n" % (len(score(5)) + 7) + score(5),
    ]
)


@given(fault=_faults, data=st.data())
@settings(max_examples=100, deadline=None)
def test_after_any_fault_the_next_valid_frame_still_comes_out(fault: bytes, data: st.DataObject) -> None:
    good = score(99)
    wire = fault + frame(good)
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=8))
    got = _read_all(wire, cuts)
    assert got[-1] == good
    faults = got[:-1]
    assert len(faults) == 1 and isinstance(faults[0], Fault)
    assert faults[0].code in (-32600, -32700) and "Content-Length" in faults[0].message
