# What an fdatasync costs on this machine's disk after a flush-like write: 6.5 MB in 256 KiB
# pieces over ~45 ms of busy CPU. Modes: "sfr" = sync_file_range(WRITE) every MiB (io::WritebackFile
# before 753a8c2), "none" = no hint, "bg" = an fdatasync requested from a helper thread every MiB
# (WritebackFile now). Part 1 times the final fdatasync alone, with a pause before it and for
# smaller files; part 2 the whole write + final sync, sfr against bg.
# Run: python3 scripts/bench/probes/fdatasync.py   (writes and removes /tmp/fs_test.bin)
import ctypes, os, queue, threading, time

libc = ctypes.CDLL("libc.so.6", use_errno=True)
SYNC_FILE_RANGE_WRITE = 2


def run(mode, pause=0.0, step=1 << 20, total=6_500_000, piece=256 * 1024, cpu_ms=45):
    path = "/tmp/fs_test.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    buf = os.urandom(piece)
    written = started = 0
    per = cpu_ms / 1000 / (total / piece)
    requests = queue.Queue()

    def syncer():
        while requests.get() is not None:
            os.fdatasync(fd)

    helper = threading.Thread(target=syncer)
    helper.start()
    t0 = time.perf_counter()
    while written < total:
        end = time.perf_counter() + per
        while time.perf_counter() < end:
            pass
        os.write(fd, buf)
        written += piece
        if written - started >= step:
            if mode == "sfr":
                libc.sync_file_range(fd, ctypes.c_longlong(started),
                                     ctypes.c_longlong(written - started), SYNC_FILE_RANGE_WRITE)
            elif mode == "bg" and requests.empty():
                requests.put(1)
            started = written
    requests.put(None)
    helper.join()
    time.sleep(pause)
    t1 = time.perf_counter()
    os.fdatasync(fd)
    t2 = time.perf_counter()
    os.close(fd)
    os.unlink(path)
    return (t1 - t0 - pause) * 1e3, (t2 - t1) * 1e3


print("part 1: the final fdatasync")
for mode, pause, total in [("sfr", 0, 6_500_000), ("sfr", 0.05, 6_500_000), ("sfr", 0.2, 6_500_000),
                           ("none", 0, 6_500_000), ("none", 0.2, 6_500_000),
                           ("sfr", 0.2, 1_300_000), ("sfr", 0.2, 100_000)]:
    _, s = run(mode, pause, total=total, piece=min(256 * 1024, total))
    print(f"  {mode:4} {total / 1e6:.1f} MB, pause {pause * 1e3:3.0f} ms: fdatasync {s:.1f} ms")
print("part 2: write + final sync")
for _ in range(3):
    for mode in ("sfr", "bg"):
        w, s = run(mode)
        print(f"  {mode}: write {w:.1f} ms, final sync {s:.1f} ms, total {w + s:.1f} ms")
