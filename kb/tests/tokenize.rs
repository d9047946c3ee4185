//! The whole-identifier tokenizer keeps CUDA identifiers as single tokens.

use gpukb_kb::tokenize::{err_tokens, split_tokens};

fn toks(s: &str) -> Vec<String> {
    err_tokens(s).into_iter().map(|(t, _, _)| t).collect()
}

#[test]
fn keeps_identifiers_whole() {
    let t = toks(
        "sm_89 libcudart.so.12 CUDA_ERROR_NO_BINARY_FOR_GPU cudaErrorInsufficientDriver \
         GLIBCXX_3.4.29 cuda-12.1",
    );
    for want in [
        "sm_89",
        "libcudart.so.12",
        "cuda_error_no_binary_for_gpu",
        "cudaerrorinsufficientdriver",
        "glibcxx_3.4.29",
        "cuda-12.1",
    ] {
        assert!(t.contains(&want.to_string()), "{want} missing from {t:?}");
    }
}

#[test]
fn xid_forms_become_one_token() {
    for s in [
        "Xid 79",
        "xid 79",
        "Xid: 79",
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
    ] {
        let t = toks(s);
        assert!(t.contains(&"xid_79".to_string()), "{s:?} -> {t:?}");
    }
}

#[test]
fn split_field_splits() {
    let t = split_tokens("libcudart.so.12 sm_89");
    assert!(t.contains(&"libcudart".to_string()), "{t:?}");
    assert!(t.contains(&"12".to_string()), "{t:?}");
}

#[test]
fn trailing_punctuation_is_not_part_of_token() {
    let t = toks("found libcudnn.so.8. Done, sm_120.");
    assert!(t.contains(&"libcudnn.so.8".to_string()), "{t:?}");
    assert!(t.contains(&"sm_120".to_string()), "{t:?}");
}
