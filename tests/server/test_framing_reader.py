"""FrameReader in-process over a real asyncio.StreamReader: framing holds however bytes arrive."""

from __future__ import annotations

import asyncio
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hrbench_server.framing import Fault, FrameReader
from tests._examples import examples
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
@settings(max_examples=examples(150), deadline=None)
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
@settings(max_examples=examples(100), deadline=None)
def test_after_any_fault_the_next_valid_frame_still_comes_out(fault: bytes, data: st.DataObject) -> None:
    good = score(99)
    wire = fault + frame(good)
    cuts = data.draw(st.lists(st.integers(0, len(wire)), max_size=8))
    got = _read_all(wire, cuts)
    assert got[-1] == good
    faults = got[:-1]
    assert len(faults) == 1 and isinstance(faults[0], Fault)
    assert faults[0].code in (-32600, -32700) and "Content-Length" in faults[0].message


# -- the end of an unframed value is found in linear work ------------------------------------


def _scan_unframed(data: bytes, chunk: int, max_body: int) -> tuple[list[bytes | Fault], int]:
    """Feed ``data`` in ``chunk``-byte pieces, one per event-loop turn, then EOF; items and bytes scanned."""

    async def main() -> tuple[list[bytes | Fault], int]:
        reader = asyncio.StreamReader(limit=1 << 24)
        frames = FrameReader(reader, max_body, stall_s=5.0)

        async def feed() -> None:
            for i in range(0, len(data), chunk):
                reader.feed_data(data[i : i + chunk])
                await asyncio.sleep(0)
            reader.feed_eof()

        task = asyncio.create_task(feed())
        out: list[bytes | Fault] = []
        while (got := await frames.next()) is not None:
            out.append(got)
        await task
        return out, frames.scanned

    return asyncio.run(main())


def test_an_unframed_value_that_never_ends_is_scanned_in_linear_work() -> None:
    # before: every 64 KiB read decoded the whole buffer again (n**2 / 128 KiB bytes: 16 MB cost
    # about 1 TB of scanning); now each byte is scanned a few times at most
    for size_mb in (2, 8, 16):
        never_ends = b'{"jsonrpc": "2.0", "id": 7, "method": "score", "params": {"output": "' + b"x" * (
            size_mb << 20
        )
        out, scanned = _scan_unframed(never_ends, 1 << 16, 64 << 20)
        assert len(out) == 1 and isinstance(out[0], Fault)
        assert out[0].code == -32600 and out[0].id == 7 and "Content-Length" in out[0].message
        assert scanned <= 3 * len(never_ends), (size_mb, scanned / len(never_ends))


def test_unframed_values_big_and_small_end_where_they_end() -> None:
    big = score(1, output="y" * (4 << 20))
    wire = big + b"\r\n" + score(2) + b"\n" + frame(score(3))
    out, scanned = _scan_unframed(wire, 1 << 16, 64 << 20)
    assert [(type(o).__name__, getattr(o, "id", None)) for o in out] == [
        ("Fault", 1),
        ("Fault", 2),
        ("bytes", None),
    ]
    assert out[2] == score(3) and scanned <= 3 * len(wire)


def test_a_content_length_over_the_limit_is_answered_before_its_body_arrives() -> None:
    async def main() -> tuple[Fault, bytes | Fault | None]:
        reader = asyncio.StreamReader()
        frames = FrameReader(reader, 1 << 20)
        length = 50 << 20
        body = score(4, output="z" * length)[:length]
        reader.feed_data(b"Content-Length: %d\r\n\r\n" % length + body[:1000])
        fault = await asyncio.wait_for(frames.next(), 5)  # before: waited for all 50 MB
        assert isinstance(fault, Fault)
        reader.feed_data(body[1000:] + frame(score(5)))
        reader.feed_eof()
        return fault, await frames.next()

    fault, after = asyncio.run(main())
    assert fault.code == -32600 and fault.id == 4
    assert f"`Content-Length` {50 << 20} exceeds the largest body accepted, {1 << 20} bytes" in fault.message
    assert after == score(5)  # the dropped body was skipped whole
