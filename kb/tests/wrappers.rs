//! The inner error decides: the same error pasted bare and inside a generic wrapper (a
//! Python traceback, vLLM worker log lines, torchrun's rank prefixes, a JSON log record
//! with escaped newlines, Windows paths) gets the same first answer.

use gpukb_kb::Kb;

/// Real error lines (torch, CUDA, NCCL, cuDNN messages as they print).
const INNER: &[&str] = &[
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.12 GiB is free.",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "RuntimeError: No CUDA GPUs are available",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 1, 0) but found runtime version (8, 9, 7).",
    "RuntimeError: CUDA error: device-side assert triggered",
];

fn traceback(inner: &str) -> String {
    format!(
        "Traceback (most recent call last):\n  File \"/srv/app/serve.py\", line 88, in <module>\n    main()\n  File \"/srv/app/serve.py\", line 61, in main\n    out = model.generate(**batch)\n  File \"/srv/venv/lib/python3.11/site-packages/torch/utils/_contextlib.py\", line 116, in decorate_context\n    return func(*args, **kwargs)\n{inner}\n"
    )
}

fn vllm(inner: &str) -> String {
    let mut out = String::from(
        "(VllmWorker rank=0 pid=48211) INFO 05-12 10:11:12 [gpu_model_runner.py:1595] Starting to load model meta-llama/Llama-3.1-8B-Instruct...\n",
    );
    for l in traceback(inner).lines() {
        out.push_str(&format!(
            "(VllmWorker rank=0 pid=48211) ERROR 05-12 10:11:14 [multiproc_executor.py:527] {l}\n"
        ));
    }
    out
}

fn torchrun(inner: &str) -> String {
    traceback(inner)
        .lines()
        .map(|l| format!("[rank0]: {l}\n"))
        .collect()
}

fn json_record(inner: &str) -> String {
    let msg = traceback(inner)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("{{\"ts\": \"2025-05-12T10:11:14Z\", \"level\": \"error\", \"logger\": \"worker\", \"msg\": \"{msg}\"}}\n")
}

fn windows(inner: &str) -> String {
    format!(
        "Traceback (most recent call last):\n  File \"C:\\Users\\me\\proj\\train.py\", line 12, in <module>\n    model.to(\"cuda\")\n  File \"C:\\Users\\me\\miniconda3\\envs\\t\\Lib\\site-packages\\torch\\nn\\modules\\module.py\", line 1343, in to\n    return self._apply(convert)\n{inner}\n"
    )
}

/// Wraps an error in one generic form.
type Wrap = fn(&str) -> String;

fn top(kb: &Kb, text: &str) -> Option<String> {
    kb.search(text, None, 3)
        .unwrap()
        .first()
        .map(|h| h.id.clone())
}

#[test]
fn the_inner_error_decides_inside_every_wrapper() {
    let kb = Kb::open().unwrap();
    let wrappers: [(&str, Wrap); 5] = [
        ("traceback", traceback),
        ("vllm worker log", vllm),
        ("torchrun ranks", torchrun),
        ("json record", json_record),
        ("windows paths", windows),
    ];
    let mut wrong = Vec::new();
    for inner in INNER {
        let bare = top(&kb, inner);
        assert!(bare.is_some(), "the bare error matches: {inner}");
        for (name, wrap) in wrappers {
            let got = top(&kb, &wrap(inner));
            if got != bare {
                wrong.push(format!(
                    "{name}: {inner}\n   bare {bare:?}, wrapped {got:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The log line prefixes a paste arrives with when it is copied from a log file, a pod's
/// log, the journal or a multi-task job rather than a terminal.
const LINE_PREFIXES: &[(&str, &str)] = &[
    ("ISO date and level", "2025-06-01T10:00:00.123Z ERROR "),
    (
        "Python logging's asctime - name - level",
        "2025-06-01 10:00:00,123 - app.worker - ERROR - ",
    ),
    (
        "Kubernetes container log",
        "2025-06-01T10:00:00.123456789Z stderr F ",
    ),
    ("bracketed date and level", "[2025-06-01 10:00:00] [ERROR] "),
    ("glog", "E0601 10:00:00.123456  4242 worker.cc:88] "),
    (
        "syslog / journalctl",
        "Jun 01 10:00:00 gpu-node-3 app[1234]: ",
    ),
    ("srun -l task number", "3: "),
    ("kubectl logs --prefix", "[pod/trainer-0/main] "),
];

/// A change made to a whole paste.
type Change<'a> = &'a dyn Fn(&str) -> String;
/// A change with its name, as the failure messages print it.
type Form<'a> = (&'a str, Change<'a>);

/// Runs every entry's first example through two of `forms` (taking turns, so each form
/// meets every kind of entry) and fails with the variants whose first answer differs from
/// the example's own.
fn assert_first_answers_kept(kb: &Kb, forms: &[Form]) {
    let mut wrong = Vec::new();
    let mut n = 0;
    for (i, e) in kb.list(None).unwrap().into_iter().enumerate() {
        let Some((_, text)) = kb.examples(&e.id).unwrap().into_iter().next() else {
            continue;
        };
        let before = top(kb, &text);
        let k = forms.len();
        for (name, change) in [&forms[i % k], &forms[(i + 3) % k]] {
            n += 1;
            let after = top(kb, &change(&text));
            if after != before {
                wrong.push(format!("{name}: {}: {before:?} became {after:?}", e.id));
            }
        }
    }
    assert!(n > 400, "ran {n} variants");
    assert!(
        wrong.is_empty(),
        "{} of {n}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every entry's first example, with every line behind a log prefix, gets the same first
/// answer as the example bare: signatures match the message, not where a line starts.
#[test]
fn log_line_prefixes_do_not_change_the_answer() {
    let kb = Kb::open().unwrap();
    #[allow(clippy::type_complexity)]
    let prefixers: Vec<(&str, Box<dyn Fn(&str) -> String>)> = LINE_PREFIXES
        .iter()
        .map(|&(name, prefix)| {
            let f = move |text: &str| -> String {
                text.lines()
                    .map(|l| {
                        if l.trim().is_empty() {
                            "\n".to_string()
                        } else {
                            format!("{prefix}{l}\n")
                        }
                    })
                    .collect()
            };
            (name, Box::new(f) as Box<dyn Fn(&str) -> String>)
        })
        .collect();
    let forms: Vec<Form> = prefixers.iter().map(|(n, f)| (*n, f.as_ref())).collect();
    assert_first_answers_kept(&kb, &forms);
}

/// A console 80 columns wide: every line cut every 80 characters, wherever they fall.
fn console_80(s: &str) -> String {
    s.lines()
        .flat_map(|l| {
            let c: Vec<char> = l.chars().collect();
            if c.is_empty() {
                return vec![String::new()];
            }
            c.chunks(80).map(|p| p.iter().collect()).collect()
        })
        .map(|l: String| l + "\n")
        .collect()
}

/// What copying a paste through a web page, a chat client, an editor or a CJK input method
/// does to the text a program printed.
const COPY_DAMAGE: &[(&str, Wrap)] = &[
    ("typographic quotes", |s| {
        s.replace('\'', "\u{2019}").replace('"', "\u{201D}")
    }),
    ("non-breaking spaces", |s| s.replace(' ', "\u{00A0}")),
    ("zero-width spaces after dots", |s| {
        s.replace('.', ".\u{200B}")
    }),
    ("full-width colons and parentheses", |s| {
        s.replace(':', "\u{FF1A}")
            .replace('(', "\u{FF08}")
            .replace(')', "\u{FF09}")
    }),
    ("HTML character references", |s| {
        s.replace('&', "&amp;")
            .replace('\'', "&#39;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    }),
    ("Markdown escapes", |s| {
        s.replace('_', "\\_").replace('*', "\\*")
    }),
    ("a Markdown code block's indentation", |s| {
        s.lines().map(|l| format!("    {l}\n")).collect()
    }),
    ("a reply's quote markers", |s| {
        s.lines().map(|l| format!("> {l}\n")).collect()
    }),
    ("a console's hard wrap at 80 columns", console_80),
    ("a mail client's fill at 72 columns", |s| {
        let mut out = String::new();
        for line in s.lines() {
            let mut width = 0;
            for (i, word) in line.split(' ').enumerate() {
                if i > 0 && width + 1 + word.len() > 72 {
                    out.push('\n');
                    width = 0;
                } else if i > 0 {
                    out.push(' ');
                    width += 1;
                }
                out.push_str(word);
                width += word.len();
            }
            out.push('\n');
        }
        out
    }),
    ("a Python repr on a log line", |s| {
        format!("ERROR:worker:{:?}\n", s)
    }),
];

/// Every entry's first example, damaged by copying, gets the same first answer as the
/// example as printed.
#[test]
fn copying_through_a_page_or_a_chat_does_not_change_the_answer() {
    let kb = Kb::open().unwrap();
    let forms: Vec<Form> = COPY_DAMAGE.iter().map(|(n, f)| (*n, f as Change)).collect();
    assert_first_answers_kept(&kb, &forms);
}

/// Reports an issue template asks for, printed on the H200 host (kb/tests/env_reports/).
const COLLECT_ENV: &str = include_str!("env_reports/collect_env-h200.txt");
const NVIDIA_SMI: &str = include_str!("env_reports/nvidia-smi-h200.txt");
const NVCC_VERSION: &str = include_str!("env_reports/nvcc-version-h200.txt");

/// Every entry's first example, with a real environment report pasted beside it (PyTorch's
/// collect_env after it, `nvidia-smi` or `nvcc --version` before it, each with the command
/// that printed it), gets the same first answer unless the report's facts decide it: its
/// library names and versions are no evidence for a cause, but its driver, GPU and torch build
/// are the failing machine's facts. So a changed answer must come from a check on those
/// facts: the example's own answer ruled out by the report, or the new one confirmed by it.
#[test]
fn environment_reports_beside_the_error_change_the_answer_only_through_their_facts() {
    let kb = Kb::open().unwrap();
    let collect_env =
        |s: &str| format!("{s}\n\n$ python -m torch.utils.collect_env\n{COLLECT_ENV}");
    let smi = |s: &str| format!("$ nvidia-smi\n{NVIDIA_SMI}\n{s}");
    let nvcc = |s: &str| format!("$ nvcc --version\n{NVCC_VERSION}{s}");
    let forms: Vec<Form> = vec![
        ("collect_env after", &collect_env),
        ("nvidia-smi before", &smi),
        ("nvcc --version before", &nvcc),
    ];
    let (mut wrong, mut n, mut by_facts) = (Vec::new(), 0, 0);
    for (i, e) in kb.list(None).unwrap().into_iter().enumerate() {
        let Some((_, text)) = kb.examples(&e.id).unwrap().into_iter().next() else {
            continue;
        };
        let before = top(&kb, &text);
        for (name, change) in [&forms[i % 3], &forms[(i + 1) % 3]] {
            n += 1;
            let q = kb.analyze(change(&text).as_bytes());
            let r = kb.rank(&q, None, 3).unwrap();
            let after = r.results.first().map(|h| h.id.clone());
            if after == before {
                continue;
            }
            let ruled_out = r.ruled_out.iter().any(|h| Some(&h.id) == before.as_ref());
            let confirmed = r.results.first().is_some_and(|h| {
                h.machine
                    .as_ref()
                    .is_some_and(|m| m.outcome() == gpukb_kb::RuleOutcome::Confirmed)
            });
            if r.reported.is_some() && (ruled_out || confirmed) {
                by_facts += 1;
            } else {
                wrong.push(format!("{name}: {}: {before:?} became {after:?}", e.id));
            }
        }
    }
    assert!(n > 400, "ran {n} variants");
    // The H200's reports describe a healthy machine: they rule out some causes.
    assert!(by_facts > 0, "no answer was decided by a report's facts");
    assert!(
        wrong.is_empty(),
        "{} of {n}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Informational lines that real logs carry around the error: TensorFlow's start-up lines,
/// each matched by an informational entry's signature.
const TENSORFLOW_STARTUP: &str = "\
2025-03-02 10:14:07.511902: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:477] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered
2025-03-02 10:14:07.540117: E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1418] Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered
2025-03-02 10:14:08.902215: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT
2025-03-02 10:14:09.118441: I external/local_xla/xla/stream_executor/cuda/cuda_executor.cc:894] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero.
";

/// Every entry's first example, with TensorFlow's start-up lines before or after it, is
/// not answered as noise: however many noise lines surround an error, the informational
/// entry does not outrank it. (The answer may move between real causes: the lines name
/// TensorFlow, which is a fact about the paste.)
#[test]
fn informational_lines_around_an_error_do_not_take_the_answer() {
    let kb = Kb::open().unwrap();
    let noise = Some("tensorflow-startup-log-noise".to_string());
    let entries = kb.list(None).unwrap();
    let benign: Vec<&str> = (entries.iter())
        .filter(|e| e.category == "benign_warning")
        .map(|e| e.id.as_str())
        .collect();
    let informational = |id: &Option<String>| id.as_deref().is_some_and(|id| benign.contains(&id));
    let mut wrong = Vec::new();
    let mut n = 0;
    for e in &entries {
        let Some((_, text)) = kb.examples(&e.id).unwrap().into_iter().next() else {
            continue;
        };
        // an example that is itself noise may be answered by either noise entry
        if informational(&top(&kb, &text)) {
            continue;
        }
        for (name, noisy) in [
            ("before", format!("{TENSORFLOW_STARTUP}{text}")),
            ("after", format!("{text}\n{TENSORFLOW_STARTUP}")),
        ] {
            n += 1;
            if top(&kb, &noisy) == noise {
                wrong.push(format!("{name}: {}", e.id));
            }
        }
    }
    assert!(n > 400, "ran {n} variants");
    assert!(
        wrong.is_empty(),
        "{} of {n} answered as noise:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The same lines alone are answered as noise: the informational entry comes first.
#[test]
fn informational_lines_alone_are_answered_as_noise() {
    let kb = Kb::open().unwrap();
    assert_eq!(
        top(&kb, TENSORFLOW_STARTUP).as_deref(),
        Some("tensorflow-startup-log-noise")
    );
}

/// A warning alone is answered as the warning, also when another entry quotes the same line
/// and the warning spans several lines under a Python `UserWarning:` header: only the lines
/// the informational entry matched, and the header, are taken out before asking whether the
/// rest states an error.
#[test]
fn a_multi_line_warning_alone_keeps_its_informational_answer() {
    let kb = Kb::open().unwrap();
    let warning = "/opt/env/lib/python3.12/site-packages/torch/cuda/__init__.py:283: UserWarning:\n    \
                   Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    \
                   Minimum and Maximum cuda capability supported by this version of PyTorch is\n    \
                   (8.0) - (12.0)\n\n  warnings.warn(\n";
    assert_eq!(
        top(&kb, warning).as_deref(),
        Some("newer-minor-capability-warning-benign")
    );
    // the same warning in front of a real error is not the answer
    let with_error =
        format!("{warning}RuntimeError: CUDA error: an illegal memory access was encountered\n");
    assert_ne!(
        top(&kb, &with_error).as_deref(),
        Some("newer-minor-capability-warning-benign")
    );
}

/// A console wraps a long line at its width wherever the column falls, inside a word too
/// (`de` / `vice`): every example of every entry with a line longer than 80 characters,
/// copied from an 80-column console, gets the same first answer as printed.
#[test]
fn a_console_s_cut_inside_a_word_does_not_change_the_answer() {
    let kb = Kb::open().unwrap();
    let (mut n, mut wrong) = (0, Vec::new());
    for e in kb.list(None).unwrap() {
        for (name, text) in kb.examples(&e.id).unwrap() {
            if !text.lines().any(|l| l.chars().count() > 80) {
                continue;
            }
            n += 1;
            let (before, after) = (top(&kb, &text), top(&kb, &console_80(&text)));
            if after != before {
                wrong.push(format!("{}/{name}: {before:?} became {after:?}", e.id));
            }
        }
    }
    assert!(n > 300, "ran {n} examples");
    assert!(
        wrong.len() * 100 <= n,
        "{} of {n} (at most 1% may change; 21 did before a cut inside a word was joined):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// A noise line broken where a fill consumed a space is still only noise: the lines its
/// signature spans are taken out before the rest is read for an error, as the signature
/// matches them (a space also matches a line break).
#[test]
fn a_noise_line_broken_by_a_fill_is_still_noise() {
    let kb = Kb::open().unwrap();
    for text in [
        "2024-05-10 11:33:15.185131: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT\nWarning: Could not find TensorRT\n",
        "2024-05-10 11:33:15.185131: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning:\nCould not find TensorRT\n",
    ] {
        assert_eq!(
            top(&kb, text).as_deref(),
            Some("tensorflow-startup-log-noise"),
            "{text}"
        );
    }
}

/// glibc prints its loader's messages in the locale's language (its own `po/*.po`): every
/// example of every entry that holds one, printed under a German, Japanese, Russian,
/// Simplified Chinese, French or Brazilian Portuguese locale, gets the same first answer as in
/// English.
#[test]
fn a_loader_message_in_another_locale_gets_the_same_answer() {
    const LOCALES: [[&str; 3]; 6] = [
        [
            "Fehler beim Laden der Shared Libraries",
            "Kann die Shared-Object-Datei nicht öffnen",
            "Datei oder Verzeichnis nicht gefunden",
        ],
        [
            "共有ライブラリのロード中にエラーが発生しました",
            "共有オブジェクトファイルを開けません",
            "そのようなファイルやディレクトリはありません",
        ],
        [
            "ошибка при загрузке разделяемых библиотек",
            "невозможно открыть разделяемый объектный файл",
            "Нет такого файла или каталога",
        ],
        [
            "载入共享库时出错",
            "无法打开共享目标文件",
            "没有那个文件或目录",
        ],
        [
            "erreur lors du chargement des librairies partagées",
            "Ne peut ouvrir le fichier d'objet partagé",
            "Aucun fichier ou dossier de ce nom",
        ],
        [
            "erro ao carregar bibliotecas compartilhadas",
            "não é possível abrir arquivo compartilhado",
            "Arquivo ou diretório inexistente",
        ],
    ];
    let kb = Kb::open().unwrap();
    let (mut n, mut wrong) = (0, Vec::new());
    for e in kb.list(None).unwrap() {
        for (name, text) in kb.examples(&e.id).unwrap() {
            if !text.contains("cannot open shared object file: No such file or directory") {
                continue;
            }
            let before = top(&kb, &text);
            for [loading, open, enoent] in LOCALES {
                n += 1;
                let local = text
                    .replace("error while loading shared libraries", loading)
                    .replace("cannot open shared object file", open)
                    .replace("No such file or directory", enoent);
                let after = top(&kb, &local);
                if after != before {
                    wrong.push(format!(
                        "{}/{name} in {open}: {before:?} became {after:?}",
                        e.id
                    ));
                }
            }
        }
    }
    assert!(n > 100, "ran {n} pastes");
    assert!(
        wrong.is_empty(),
        "{} of {n}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
