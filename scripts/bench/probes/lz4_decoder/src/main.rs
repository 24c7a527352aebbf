use std::time::Instant;
fn main(){
    let data = std::fs::read("/tmp/corpus.txt").unwrap();
    let chunks: Vec<&[u8]> = data.chunks(4096).collect();
    let (mut bc, mut bd) = (f64::MAX, f64::MAX);
    let mut out = vec![0u8; 4096];
    for _ in 0..30 {
        let t = Instant::now();
        let comp: Vec<Vec<u8>> = chunks.iter().map(|c| lz4_flex::block::compress(c)).collect();
        bc = bc.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for (c, z) in chunks.iter().zip(&comp) { lz4_flex::block::decompress_into(z, &mut out[..c.len()]).unwrap(); }
        bd = bd.min(t.elapsed().as_secs_f64());
    }
    let mb = data.len() as f64 / 1e6;
    println!("{}: compress {:.0} MB/s, decompress {:.0} MB/s", if cfg!(feature="safe") {"safe  "} else {"unsafe"}, mb/bc, mb/bd);
}
