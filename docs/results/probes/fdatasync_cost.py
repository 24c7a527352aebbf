# What an fdatasync costs after 6.5 MB written in 256 KiB pieces over ~45 ms (a flush's pace),
# with sync_file_range(WRITE) every MiB, with a pause before the sync, without the hint, and for
# smaller files. Run: python3 docs/results/probes/fdatasync_cost.py (writes /tmp/fs_test.bin).
import os, time, ctypes, sys
libc = ctypes.CDLL("libc.so.6", use_errno=True)
SYNC_FILE_RANGE_WRITE = 2
def run(pause_before_sync, step=1<<20, total=6_500_000, piece=256*1024, cpu_ms=45):
    path="/tmp/fs_test.bin"
    fd=os.open(path, os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o644)
    buf=os.urandom(piece)
    written=0; started=0
    per = cpu_ms/1000/(total/piece)
    t0=time.perf_counter()
    while written<total:
        end=time.perf_counter()+per
        while time.perf_counter()<end: pass
        os.write(fd, buf); written+=piece
        if written-started>=step:
            libc.sync_file_range(fd, ctypes.c_longlong(started), ctypes.c_longlong(written-started), SYNC_FILE_RANGE_WRITE)
            started=written
    if pause_before_sync: time.sleep(pause_before_sync)
    t1=time.perf_counter(); os.fdatasync(fd); t2=time.perf_counter()
    os.close(fd); os.unlink(path)
    return (t2-t1)*1e3
for p in [0,0,0,0.05,0.05,0.05,0.2,0.2]:
    print(f"pause {p*1e3:.0f} ms: fdatasync {run(p):.1f} ms")
print("no sync_file_range:")
for p in [0,0.2]:
    print(f"pause {p*1e3:.0f} ms: fdatasync {run(p, step=1<<40):.1f} ms")
print("small file 100 KB:")
for p in [0,0.2]:
    print(f"pause {p*1e3:.0f} ms: fdatasync {run(p, total=100_000, piece=4096, cpu_ms=1):.1f} ms")
print("1.3 MB file:")
for p in [0,0.2]:
    print(f"pause {p*1e3:.0f} ms: fdatasync {run(p, total=1_300_000):.1f} ms")
