//! gpukb's reading of the loader's messages against the real glibc in other locales: a small
//! C program that calls `setlocale(LC_ALL, "")`, as C++ and GUI programs do, `dlopen`s CUDA
//! sonames that are not installed and prints glibc's `dlerror()`; locales are built here
//! with `localedef`, glibc's translations are the system's (`libc.mo`). Under every locale
//! the message must come out translated (else the test proves nothing), and search must give
//! each translated message the first answer it gives the C locale's. A host without `cc`,
//! `localedef`, the locale sources or glibc's translations fails the test.
#![allow(clippy::disallowed_methods)] // builds and runs a real program

use gpukb_kb::Kb;
use gpukb_tests::run;
use std::path::Path;
use std::process::Command;

const DLOPEN_C: &str = r#"
#include <dlfcn.h>
#include <locale.h>
#include <stdio.h>
int main(int argc, char **argv) {
  setlocale(LC_ALL, "");
  for (int i = 1; i < argc; i++)
    if (!dlopen(argv[i], RTLD_NOW)) puts(dlerror());
  return 0;
}
"#;

/// CUDA sonames no test host has.
const SONAMES: [&str; 6] = [
    "libcudart.so.12",
    "libcudnn_ops_infer.so.8",
    "libcuda.so.1",
    "libcublasLt.so.12",
    "libnvinfer.so.10",
    "libnccl.so.2",
];

const LOCALES: [&str; 10] = [
    "de_DE", "ja_JP", "zh_CN", "zh_TW", "ko_KR", "ru_RU", "fr_FR", "es_ES", "it_IT", "pt_BR",
];

fn dlerrors(program: &Path, locpath: &Path, locale: &str) -> Vec<String> {
    let out = run(Command::new(program)
        .args(SONAMES)
        .env_clear()
        .env("LOCPATH", locpath)
        .env("LC_ALL", locale));
    out.lines().map(str::to_owned).collect()
}

fn first(kb: &Kb, text: &str) -> Option<String> {
    kb.search(text, None, 3)
        .unwrap()
        .first()
        .map(|h| h.id.clone())
}

#[test]
fn a_loader_message_glibc_translates_gets_the_answer_of_the_c_locale() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("dlopen.c");
    std::fs::write(&src, DLOPEN_C).unwrap();
    let program = dir.path().join("dlopen");
    run(Command::new("cc")
        .arg("-o")
        .arg(&program)
        .arg(&src)
        .arg("-ldl"));
    let locpath = dir.path().join("locales");
    std::fs::create_dir(&locpath).unwrap();
    for l in LOCALES {
        run(Command::new("localedef")
            .args(["-i", l, "-f", "UTF-8"])
            .arg(locpath.join(format!("{l}.UTF-8"))));
    }
    let kb = Kb::open().unwrap();
    let english = dlerrors(&program, &locpath, "C");
    assert_eq!(english.len(), SONAMES.len(), "{english:?}");
    let answers: Vec<Option<String>> = english
        .iter()
        .map(|m| first(&kb, &format!("OSError: {m}")))
        .collect();
    assert!(answers.iter().all(Option::is_some), "{english:?}");
    let mut wrong = Vec::new();
    for l in LOCALES {
        let local = dlerrors(&program, &locpath, &format!("{l}.UTF-8"));
        assert_eq!(local.len(), english.len(), "{l}: {local:?}");
        for ((c, m), want) in english.iter().zip(&local).zip(&answers) {
            assert_ne!(c, m, "{l}: glibc printed no translation");
            let got = first(&kb, &format!("OSError: {m}"));
            if &got != want {
                wrong.push(format!("{l}: {m:?} → {got:?}, in C {want:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
