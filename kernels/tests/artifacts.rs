//! Checks that the committed artifacts are complete (every arch, right ELF
//! machine and SM, right PTX `.version`/`.target`) and current (MANIFEST
//! sha256 of every source and artifact matches the files).
#![allow(clippy::disallowed_methods)] // tests read the committed files

use gpukb_kernels::{images, ProbeImageKind, KERNELS, SASS_ARCHS};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn le16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn le32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// SM number in a cubin's e_flags: ABI 7 keeps it in bits 0..8, ABI 8 (CUDA 13,
/// and sm_100+ from 12.9) in bits 8..16.
fn cubin_sm(elf: &[u8]) -> u32 {
    assert_eq!(&elf[..4], b"\x7fELF");
    assert_eq!(elf[4], 2, "ELFCLASS64");
    assert_eq!(le16(elf, 18), 190, "e_machine EM_CUDA");
    let flags = le32(elf, 48);
    match elf[8] {
        7 => flags & 0xff,
        8 => (flags >> 8) & 0xff,
        v => panic!("unknown cubin ABI version {v}"),
    }
}

fn ptx_directive<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {name} directive"))
}

#[test]
fn every_arch_has_a_cubin_and_a_ptx() {
    for arch in SASS_ARCHS {
        assert!(
            images()
                .iter()
                .any(|i| i.kind == ProbeImageKind::Cubin && i.arch == arch),
            "cubin sm_{arch}"
        );
        assert!(
            images()
                .iter()
                .any(|i| i.kind == ProbeImageKind::Ptx && i.arch == arch && !i.is_future_ptx()),
            "ptx compute_{arch}"
        );
    }
    assert_eq!(images().iter().filter(|i| i.is_future_ptx()).count(), 1);
}

#[test]
fn images_are_what_they_claim() {
    for img in images() {
        let on_disk = std::fs::read(root().join("artifacts").join(img.name)).unwrap();
        assert_eq!(on_disk, img.bytes, "{} embedded = committed", img.name);
        match img.kind {
            ProbeImageKind::Cubin => {
                assert_eq!(cubin_sm(img.bytes), img.arch, "{}", img.name);
                assert!(img.ptx_isa.is_none());
            }
            ProbeImageKind::Ptx => {
                let text = std::str::from_utf8(img.bytes).unwrap();
                let (maj, min) = img.ptx_isa.unwrap();
                assert_eq!(
                    ptx_directive(text, ".version "),
                    format!("{maj}.{min}"),
                    "{}",
                    img.name
                );
                assert_eq!(
                    ptx_directive(text, ".target "),
                    format!("sm_{}", img.arch),
                    "{}",
                    img.name
                );
                for k in KERNELS {
                    assert!(
                        text.contains(&format!(".entry {k}(")),
                        "{} has {k}",
                        img.name
                    );
                }
            }
        }
    }
}

#[test]
fn low_isa_ptx_is_old_enough_for_old_drivers() {
    let low = images()
        .iter()
        .find(|i| i.name == "gpukb_probe.compute_53.ptx")
        .unwrap();
    // CUDA 10.2 (JetPack 4) JITs up to ISA 6.5.
    assert!(low.ptx_isa.unwrap() <= (6, 5));
}

#[test]
fn manifest_matches_sources_and_artifacts() {
    let manifest = std::fs::read_to_string(root().join("artifacts/MANIFEST")).unwrap();
    let mut listed = Vec::new();
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let (hash, rel) = line.split_once("  ").unwrap();
        let bytes = std::fs::read(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(
            sha256_hex(&bytes),
            hash,
            "{rel} changed since kernels/regen.sh last ran: run it and commit kernels/artifacts"
        );
        listed.push(rel.to_string());
    }
    for dir in ["cuda", "artifacts"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name != "MANIFEST" {
                let rel = format!("{dir}/{name}");
                assert!(
                    listed.contains(&rel),
                    "{rel} missing from MANIFEST: run kernels/regen.sh"
                );
            }
        }
    }
    for img in images() {
        assert!(listed.contains(&format!("artifacts/{}", img.name)));
    }
}

#[test]
fn sha256_known_answers() {
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let long = vec![b'a'; 1_000_000];
    assert_eq!(
        sha256_hex(&long),
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    );
}

/// FIPS 180-4 SHA-256 (test-only; the artifacts are small).
fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 64];
        for t in 0..16 {
            w[t] = u32::from_be_bytes([
                block[4 * t],
                block[4 * t + 1],
                block[4 * t + 2],
                block[4 * t + 3],
            ]);
        }
        for t in 16..64 {
            let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
            let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16]
                .wrapping_add(s0)
                .wrapping_add(w[t - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for t in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[t])
                .wrapping_add(w[t]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}
