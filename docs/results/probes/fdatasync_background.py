# The same writes as fdatasync_cost.py, with sync_file_range(WRITE) every MiB ("sfr") against an
# fdatasync requested from a helper thread every MiB ("bg"), as io::WritebackFile now does.
# Run: python3 docs/results/probes/fdatasync_background.py
import os, time, ctypes, threading, queue
libc = ctypes.CDLL("libc.so.6", use_errno=True)
def run(mode, step=1<<20, total=6_500_000, piece=256*1024, cpu_ms=45):
    path="/tmp/fs_test.bin"
    fd=os.open(path, os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o644)
    buf=os.urandom(piece)
    written=0; started=0
    per = cpu_ms/1000/(total/piece)
    q=queue.Queue(); 
    def worker():
        while True:
            x=q.get()
            if x is None: return
            os.fdatasync(fd)
    th=threading.Thread(target=worker); th.start()
    t0=time.perf_counter()
    while written<total:
        end=time.perf_counter()+per
        while time.perf_counter()<end: pass
        os.write(fd, buf); written+=piece
        if written-started>=step:
            if mode=="sfr":
                libc.sync_file_range(fd, ctypes.c_longlong(started), ctypes.c_longlong(written-started), 2)
            elif mode=="bg":
                if q.empty(): q.put(1)
            started=written
    t1=time.perf_counter()
    q.put(None); th.join()
    os.fdatasync(fd); t2=time.perf_counter()
    os.close(fd); os.unlink(path)
    return (t1-t0)*1e3, (t2-t1)*1e3, (t2-t0)*1e3
for i in range(3):
    for mode in ["sfr","bg"]:
        w,s,t=run(mode); print(f"{mode}: write {w:.1f} final sync {s:.1f} total {t:.1f} ms")
