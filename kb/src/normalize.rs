//! Normalises a pasted error before search: caps its size (head and tail), decodes invalid
//! UTF-8 lossily, strips ANSI colours, control bytes, timestamps, hex addresses and user
//! paths, turns back into ASCII what copying through a web page, a chat client, an editor or
//! a CJK input method changed (typographic quotes, Unicode spaces, zero-width characters,
//! full-width ASCII, HTML character references, Markdown escapes, the indentation of a
//! code block, a console's hard line wraps, a loader message that lost its colon, Windows'
//! DLL loader messages in another display language), sees
//! through log wrappers ([`crate::unwrap`]), leaves out the environment reports pasted beside
//! the error ([`crate::env_report`]), and collapses repeated lines.
//! Pure functions, no I/O.

use std::sync::LazyLock;

use regex::Regex;

/// Largest input kept: the first and last half of this many bytes.
pub const MAX_INPUT: usize = 1 << 20;
/// Longest line kept (longer lines are cut; minified junk has no diagnosis in its middle).
const MAX_LINE: usize = 4096;

static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    // ASCII classes on purpose: Unicode \d and \s make this regex cost milliseconds to build.
    Regex::new(concat!(
        r"\b[0-9]{4}[-/][0-9]{2}[-/][0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?",
        r"|^[ \t]*\[[ \t]*[0-9]+\.[0-9]+\]",
        r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}\b",
        r"|\b[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)\b"
    ))
    .expect("static regex")
});
static HEX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b0x[0-9a-fA-F]{6,}\b|\b[0-9a-f]{12,}\b").expect("static regex"));
static USER_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:/home|/Users)/[^/\s]+/|(?i:[A-Z]:\\Users\\)[^\\\s]+\\").expect("static regex")
});

/// Removes ANSI escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \\`, and
/// two-byte `ESC x`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match it.peek() {
            Some('[') => {
                it.next();
                // parameters and intermediates, then one final byte in @..~
                for d in it.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            Some(']') => {
                it.next();
                let mut n = 0;
                while let Some(d) = it.next() {
                    n += 1;
                    if d == '\x07' || n > 512 {
                        break;
                    }
                    if d == '\x1b' {
                        if it.peek() == Some(&'\\') {
                            it.next();
                        }
                        break;
                    }
                }
            }
            Some(_) => {
                it.next();
            }
            None => {}
        }
    }
    out
}

/// Keeps at most [`MAX_INPUT`] bytes (head and tail) and decodes lossily.
pub fn cap_and_decode(input: &[u8]) -> String {
    if input.len() <= MAX_INPUT {
        return String::from_utf8_lossy(input).into_owned();
    }
    let half = MAX_INPUT / 2;
    let head = String::from_utf8_lossy(&input[..half]);
    let tail = String::from_utf8_lossy(&input[input.len() - half..]);
    format!("{head}\n[...]\n{tail}")
}

/// The ASCII a program printed, where copying the paste replaced it: typographic quotes
/// and dashes, non-breaking and other Unicode spaces, zero-width characters, full-width
/// ASCII (U+FF01..U+FF5E, typed by CJK input methods), and the HTML character references
/// a page or an escaped JSON field leaves (`&quot;`, `&#39;`, `&lt;`, `&gt;`, `&nbsp;`,
/// `&amp;`), and the `<br>` line breaks of a page's source.
pub fn ascii_typography(text: &str) -> std::borrow::Cow<'_, str> {
    let entities = text.contains('&');
    let breaks = text.contains("<br") || text.contains("<BR");
    if text.is_ascii() && !entities && !breaks {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => out.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{2026}' => out.push_str("..."),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
                out.push(' ')
            }
            '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => {}
            '\u{FF01}'..='\u{FF5E}' => {
                out.push(char::from_u32(c as u32 - 0xFEE0).unwrap_or(c));
            }
            _ => out.push(c),
        }
    }
    if entities {
        for (entity, ascii) in [
            ("&quot;", "\""),
            ("&#34;", "\""),
            ("&#39;", "'"),
            ("&#x27;", "'"),
            ("&apos;", "'"),
            ("&lt;", "<"),
            ("&gt;", ">"),
            ("&nbsp;", " "),
            ("&amp;", "&"),
        ] {
            if out.contains(entity) {
                out = out.replace(entity, ascii);
            }
        }
    }
    if out.contains("<br") || out.contains("<BR") {
        for tag in ["<br>", "<br/>", "<br />", "<BR>", "<BR/>", "<BR />"] {
            out = out.replace(tag, "\n");
        }
    }
    out.into()
}

/// The indentation every line shares, removed (a paste set as a Markdown code block by
/// indenting it, or quoted by a mail client): what the program printed starts at column 0.
fn dedent(text: &str) -> std::borrow::Cow<'_, str> {
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let common = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(indent)
        .min()
        .unwrap_or(0);
    if common == 0 {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        // every non-blank line has at least `common` ASCII whitespace bytes in front
        out.push_str(if line.trim().is_empty() {
            "\n"
        } else {
            &line[common..]
        });
    }
    out.into()
}

/// Lines a console broke at its width (Windows' legacy console copies a long line as
/// several, each exactly as wide as the window), joined back. A paste counts as hard-wrapped
/// when its longest line, at least 70 characters, is matched in length by another line
/// (a wrapped paste has no line longer than the window), or when its one line of that
/// length ends where the next one visibly goes on (inside a number, or at a space); a line of
/// that length is then joined to the next one. Table rows (`|`, `+`), rules (`=====`) and
/// progress bars (box and block characters, a closing `]`) are never joined.
fn join_hard_wraps(text: &str) -> std::borrow::Cow<'_, str> {
    let len = |l: &str| l.trim_end_matches('\r').chars().count();
    let width = text.lines().map(len).max().unwrap_or(0);
    if width < 70 {
        return text.into();
    }
    let table = |l: &str| {
        let l = l.trim_end_matches('\r');
        let first = l.chars().next().unwrap_or(' ');
        l.starts_with(['|', '+'])
            || l.ends_with(['|', ']'])
            || l.chars().all(|c| c == first)
            || l.chars().any(|c| ('\u{2500}'..='\u{259F}').contains(&c))
    };
    let full = text
        .lines()
        .filter(|l| len(l) == width && !table(l))
        .count();
    if full == 0 {
        return text.into();
    }
    // One full-width line is a console's wrap only where the cut shows: inside a number
    // (`12.` / `8`, `1` / `23`), after a space (`Could ` / `not`) or before one (`host` /
    // ` device`), or inside a word the knowledge base is written in whose pieces are not
    // both its words (`de` / `vice`, `compi` / `le`, `CUDA en` / `abled`). Between two
    // words it does not show: in the corpus such a break was a word's end (a filled
    // paragraph, a product's own line, a command and its output) 22 times in 26, so it is
    // kept (a phrase still matches across it).
    let cut_shows = |line: &str, next: Option<&str>| {
        let Some(next) = next else { return false };
        // A cut inside a word shows whatever follows (`version m` / `ismatch:`), and so does
        // one inside a path (`nvidia/570.133.07/g` / `sp_ga10x.bin`).
        if cuts_a_word(line, next) || cuts_a_path(line, next) {
            return true;
        }
        // Lines that start alike (`svc-1  | `, a timestamp, srun's `3: `) are a log's, not a
        // cut's; a command line is followed by its output, and a line that opens with a
        // label (`bash:`, `error:`) starts anew.
        if line.chars().take(4).eq(next.chars().take(4))
            || first_word(line).is_some_and(|w| first_word(next) == Some(w))
            || line.starts_with(['$', '#', '>'])
            || line.starts_with("PS ")
            || next.split_whitespace().next().is_some_and(|w| {
                w.strip_suffix(':')
                    .is_some_and(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphabetic()))
            })
        {
            return false;
        }
        let tail = line.chars().last().unwrap_or(' ');
        let head = next.chars().next().unwrap_or(' ');
        let mut rest = next.chars().skip(1);
        let one_space_indent =
            head == ' ' && rest.next().is_some_and(|c| !c.is_whitespace() && c != '|');
        (tail.is_ascii_digit() && head.is_ascii_digit())
            // a version goes on after its dot (`12.` / `8`)
            || (matches!(tail, '.' | '_' | '-' | '/')
                && line.chars().rev().nth(1).is_some_and(|c| c.is_ascii_alphanumeric())
                && head.is_ascii_digit())
            || (tail == ' ' && !head.is_whitespace())
            || (tail != ' ' && one_space_indent)
    };
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    // One cut inside a word or a number shows the whole paste came from a console: its
    // other full-width lines are joined too, where a word on each side would read as a
    // fill's break (`tool` / `chain`)
    let console = full >= 2
        && lines.windows(2).any(|w| {
            len(w[0]) == width
                && !table(w[0])
                && (cuts_a_word(w[0], w[1])
                    || (w[0].ends_with(|c: char| c.is_ascii_digit())
                        && w[1].starts_with(|c: char| c.is_ascii_digit())))
        });
    let mut out = String::with_capacity(text.len());
    for (i, body) in lines.iter().enumerate() {
        out.push_str(body);
        let next = lines.get(i + 1).copied();
        let wrapped = len(body) == width
            && !table(body)
            && (if full >= 2 {
                console || !fill_break(body, next)
            } else {
                cut_shows(body, next)
            });
        if !wrapped {
            out.push('\n');
        }
    }
    out.into()
}

/// Whether a break falls inside a path: the line ends in a path's unfinished name (its last
/// word holds a `/`, not at its end) and the next line goes on with the rest of a file name
/// (letters, digits, `_`, `-`, a `.` or `/` in it), not with a word of its own.
fn cuts_a_path(line: &str, next: &str) -> bool {
    let last = line.rsplit(' ').next().unwrap_or("");
    let rest = next.split(' ').next().unwrap_or("");
    let name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    last.contains('/')
        && !last.ends_with('/')
        && last
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && rest.chars().all(name)
        && rest.contains(['.', '/', '_'])
}

/// A line's first word when a space follows it (`3:` of srun's `3: …`).
fn first_word(line: &str) -> Option<&str> {
    line.split_once(' ')
        .map(|(w, _)| w)
        .filter(|w| !w.is_empty())
}

/// Whether a full-width line's break is a fill's (a mail client's, a forum's): it breaks
/// only where a space was, and consumes it, so it falls between two words, neither of them
/// cut (`GiB` / `is`, `free.` / `Including`). A console keeps every character: its break
/// shows a space at either side, or cuts a word, a number, a path or an identifier.
fn fill_break(line: &str, next: Option<&str>) -> bool {
    let Some(next) = next else { return false };
    let (Some(tail), Some(head)) = (line.chars().last(), next.chars().next()) else {
        return false;
    };
    if tail == ' ' || head == ' ' || !head.is_ascii_alphabetic() || cuts_a_word(line, next) {
        return false;
    }
    let (last, first) = (letters_before_break(line), letters_after_break(next));
    let head_word = is_word(first);
    if last.is_empty() {
        // sentence punctuation, or a closing quote or bracket, ends a word before the space
        // a fill consumed (`srcSelectDimSize\`` / `failed.`)
        return matches!(
            tail,
            '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '`' | '\'' | '"'
        ) && head_word;
    }
    // a short token of its own (`GiB`, `MiB`) is a word too
    let token = last.len() <= 3 && line[..line.len() - last.len()].ends_with(' ');
    (token || is_word(last)) && head_word
}

/// The run of ASCII letters a line ends with (empty when it ends otherwise).
fn letters_before_break(line: &str) -> &str {
    &line[line
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .len()..]
}

/// The run of ASCII letters a line starts with (empty when it starts otherwise).
fn letters_after_break(next: &str) -> &str {
    &next[..next.len()
        - next
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .len()]
}

/// A word of the knowledge base, or a short English word.
fn is_word(w: &str) -> bool {
    crate::vocabulary::knows(w) || SHORT_WORDS.contains(&w.to_ascii_lowercase().as_str())
}

/// English words shorter than the vocabulary's shortest (`crate::vocabulary::MIN_LEN`)
/// that a fill leaves at a line's edge.
const SHORT_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "for", "has", "if", "in", "is",
    "it", "its", "may", "no", "not", "of", "on", "or", "so", "the", "to", "was", "we", "you",
];

/// Whether the break between `line` and `next` falls inside a word: the letters on both
/// sides of it make a word of the knowledge base ([`crate::vocabulary`]), and the two
/// pieces are not both its words (`driver` / `version` stays two words).
fn cuts_a_word(line: &str, next: &str) -> bool {
    let (head, tail) = (letters_before_break(line), letters_after_break(next));
    if head.is_empty() || tail.is_empty() {
        return false;
    }
    is_word(&format!("{head}{tail}")) && !(is_word(head) && is_word(tail))
}

/// Markdown's backslash escapes (`libcudnn\_ops`, `\*\*kwargs`, `\[rank0\]`), left when a
/// rendered comment or chat message is copied as source. Runs after Windows paths were
/// turned to slashes, so a path's backslashes are not taken for escapes.
fn markdown_unescape(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\_") && !text.contains("\\*") && !text.contains("\\[") {
        return text.into();
    }
    text.replace("\\_", "_")
        .replace("\\*", "*")
        .replace("\\[", "[")
        .replace("\\]", "]")
        .into()
}

static SONAME_NO_COLON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\.so(?:\.[0-9]+)*) +cannot open shared object file").expect("static regex")
});

/// Puts back the colon glibc's loader writes after the name (`libcudnn.so.6: cannot open
/// shared object file`) where a retyped or reflowed paste lost it, so the one message reads
/// one way.
fn loader_colon(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(" cannot open shared object file") {
        return text.into();
    }
    SONAME_NO_COLON.replace_all(text, "$1: cannot open shared object file")
}

/// Windows' own text for the loader errors a DLL failure prints (FormatMessage of
/// ERROR_MOD_NOT_FOUND 126, ERROR_PROC_NOT_FOUND 127, ERROR_DLL_INIT_FAILED 1114, and
/// ERROR_COMMITMENT_LIMIT 1455 in Chinese) in the
/// display languages pastes arrive in, and the English text the KB's signatures are written
/// against. Which one it is decides the diagnosis (a missing DLL, a DLL of another build, a
/// runtime that failed to start, host memory used up), so a translated paste must read the
/// same way.
const WINDOWS_MESSAGES: [(&str, &str); 26] = [
    (
        "找不到指定的模块",
        "The specified module could not be found",
    ),
    (
        "找不到指定的模組",
        "The specified module could not be found",
    ),
    (
        "指定されたモジュールが見つかりません",
        "The specified module could not be found",
    ),
    (
        "지정된 모듈을 찾을 수 없습니다",
        "The specified module could not be found",
    ),
    (
        "Das angegebene Modul wurde nicht gefunden",
        "The specified module could not be found",
    ),
    (
        "Le module spécifié est introuvable",
        "The specified module could not be found",
    ),
    (
        "No se puede encontrar el módulo especificado",
        "The specified module could not be found",
    ),
    (
        "Não foi possível encontrar o módulo especificado",
        "The specified module could not be found",
    ),
    (
        "Не найден указанный модуль",
        "The specified module could not be found",
    ),
    (
        "Impossibile trovare il modulo specificato",
        "The specified module could not be found",
    ),
    (
        "找不到指定的程序",
        "The specified procedure could not be found",
    ),
    (
        "指定されたプロシージャが見つかりません",
        "The specified procedure could not be found",
    ),
    (
        "지정된 프로시저를 찾을 수 없습니다",
        "The specified procedure could not be found",
    ),
    (
        "Die angegebene Prozedur wurde nicht gefunden",
        "The specified procedure could not be found",
    ),
    (
        "La procédure spécifiée est introuvable",
        "The specified procedure could not be found",
    ),
    (
        "No se encontró el proceso especificado",
        "The specified procedure could not be found",
    ),
    (
        "Não foi possível encontrar o procedimento especificado",
        "The specified procedure could not be found",
    ),
    (
        "Не найдена указанная процедура",
        "The specified procedure could not be found",
    ),
    (
        "Impossibile trovare la procedura specificata",
        "The specified procedure could not be found",
    ),
    (
        "动态链接库(DLL)初始化例程失败",
        "A dynamic link library (DLL) initialization routine failed",
    ),
    (
        "ダイナミック リンク ライブラリ (DLL) 初期化ルーチンの実行に失敗しました",
        "A dynamic link library (DLL) initialization routine failed",
    ),
    (
        "DLL(동적 연결 라이브러리) 초기화 루틴을 실패했습니다",
        "A dynamic link library (DLL) initialization routine failed",
    ),
    (
        "Eine DLL-Initialisierungsroutine ist fehlgeschlagen",
        "A dynamic link library (DLL) initialization routine failed",
    ),
    (
        "Une routine d'initialisation d'une bibliothèque de liens dynamiques (DLL) a échoué",
        "A dynamic link library (DLL) initialization routine failed",
    ),
    (
        "Произошел сбой в программе инициализации библиотеки динамической компоновки (DLL)",
        "A dynamic link library (DLL) initialization routine failed",
    ),
    // ERROR_COMMITMENT_LIMIT 1455 (the full-width comma is ASCII by now), as kohya_ss#449 shows it
    (
        "页面文件太小,无法完成操作",
        "The paging file is too small for this operation to complete",
    ),
];

/// glibc's loader messages (`error while loading shared libraries`, `cannot open shared object
/// file`, `symbol lookup error`, the ELF class and header errors, strerror's ENOENT) as glibc's
/// own translations print them under a zh_CN, zh_TW, ja, ko, ru, de, fr, es, it or pt_BR locale
/// (every UTF-8 msgstr of those msgids in glibc's `po/*.po` since 2007, glibc.git mirror
/// bminor/glibc 04e750e7; zh_CN's `加载共享库时出错` is Ubuntu's language pack's, seen in pastes),
/// GCC's Chinese `fatal error` and `compilation terminated`, and the English text the
/// signatures are written against. A full-width colon is already ASCII here. Longer forms
/// come first.
const GNU_MESSAGES: [(&str, &str); 80] = [
    // GCC's full-width colon has no space after it; the English one has
    ("致命错误:", "fatal error: "),
    (":没有那个文件或目录", ": No such file or directory"),
    ("加载共享库时出错", "error while loading shared libraries"),
    ("载入共享库时出错", "error while loading shared libraries"),
    ("装入共享库时出错", "error while loading shared libraries"),
    ("无法打开共享对象文件", "cannot open shared object file"),
    ("无法打开共享目标文件", "cannot open shared object file"),
    ("没有那个文件或目录", "No such file or directory"),
    ("符号查找错误", "symbol lookup error"),
    ("符号查询错误", "symbol lookup error"),
    ("错误的 ELF 类", "wrong ELF class"),
    ("ELF 类不对", "wrong ELF class"),
    ("错误 ELF 类", "wrong ELF class"),
    ("无效的 ELF 头", "invalid ELF header"),
    ("致命错误", "fatal error"),
    ("编译中断", "compilation terminated"),
    (
        "正在載入共用函式庫時發生錯誤",
        "error while loading shared libraries",
    ),
    (
        "載入共用函式庫時發生錯誤",
        "error while loading shared libraries",
    ),
    ("無法開啟共用目的檔", "cannot open shared object file"),
    ("無法開啟共用物件", "cannot open shared object file"),
    ("沒有此一檔案或目錄", "No such file or directory"),
    ("符號查找錯誤", "symbol lookup error"),
    ("錯誤 ELF 類別", "wrong ELF class"),
    ("無效的 ELF 標頭", "invalid ELF header"),
    (
        "共有ライブラリのロード中にエラーが発生しました",
        "error while loading shared libraries",
    ),
    (
        "共有オブジェクトファイルを開けません",
        "cannot open shared object file",
    ),
    (
        "そのようなファイルやディレクトリはありません",
        "No such file or directory",
    ),
    ("シンボル検索エラーです", "symbol lookup error"),
    ("間違った ELF クラスです", "wrong ELF class"),
    ("無効な ELF ヘッダーです", "invalid ELF header"),
    ("無効な ELF ヘッダです", "invalid ELF header"),
    (
        "동적 라이브러리를 읽어들이는데 오류가 발생했습니다",
        "error while loading shared libraries",
    ),
    (
        "동적 라이브러리를 읽어들이는 데 오류가 발생했습니다",
        "error while loading shared libraries",
    ),
    (
        "동적 오브젝트 파일을 열 수 없습니다",
        "cannot open shared object file",
    ),
    (
        "그런 파일이나 디렉터리가 없습니다",
        "No such file or directory",
    ),
    (
        "그런 파일이나 디렉토리가 없습니다",
        "No such file or directory",
    ),
    ("심볼 찾기 오류", "symbol lookup error"),
    ("ELF 클래스가 틀렸습니다", "wrong ELF class"),
    ("ELF 헤더가 잘못됨", "invalid ELF header"),
    ("잘못된 ELF 헤더", "invalid ELF header"),
    (
        "ошибка при загрузке разделяемых библиотек",
        "error while loading shared libraries",
    ),
    (
        "невозможно открыть разделяемый объектный файл",
        "cannot open shared object file",
    ),
    ("Нет такого файла или каталога", "No such file or directory"),
    ("ошибка поиска символа", "symbol lookup error"),
    ("неправильный класс ELF", "wrong ELF class"),
    ("неверный заголовок ELF", "invalid ELF header"),
    (
        "Fehler beim Laden der Shared Libraries",
        "error while loading shared libraries",
    ),
    (
        "Kann die Shared-Object-Datei nicht öffnen",
        "cannot open shared object file",
    ),
    (
        "Datei oder Verzeichnis nicht gefunden",
        "No such file or directory",
    ),
    (
        "Fehler beim Nachschlagen des Symbols",
        "symbol lookup error",
    ),
    ("falsche ELF-Klasse", "wrong ELF class"),
    ("Ungültiger ELF-Header", "invalid ELF header"),
    (
        "erreur lors du chargement des librairies partagées",
        "error while loading shared libraries",
    ),
    (
        "Ne peut ouvrir le fichier d'objet partagé",
        "cannot open shared object file",
    ),
    (
        "Aucun fichier ou dossier de ce nom",
        "No such file or directory",
    ),
    (
        "Aucun fichier ou dossier de ce type",
        "No such file or directory",
    ),
    ("erreur de recherche de symbole", "symbol lookup error"),
    ("mauvaise classe ELF :", "wrong ELF class:"),
    ("en-tête ELF invalide", "invalid ELF header"),
    (
        "error al cargar las bibliotecas compartidas",
        "error while loading shared libraries",
    ),
    (
        "no se puede abrir el fichero del objeto compartido",
        "cannot open shared object file",
    ),
    (
        "No existe el fichero o el directorio",
        "No such file or directory",
    ),
    (
        "No existe el archivo o el directorio",
        "No such file or directory",
    ),
    ("error de búsqueda de símbolo", "symbol lookup error"),
    ("clase ELF errónea", "wrong ELF class"),
    ("cabecera ELF inválida", "invalid ELF header"),
    (
        "errore durante il caricamento delle librerie condivise",
        "error while loading shared libraries",
    ),
    (
        "impossibile aprire il file oggetto condiviso",
        "cannot open shared object file",
    ),
    (
        "File o directory non esistente",
        "No such file or directory",
    ),
    ("File o directory inesistente", "No such file or directory"),
    ("errore nella ricerca del simbolo", "symbol lookup error"),
    ("classe ELF errata", "wrong ELF class"),
    ("intestazione ELF non valida", "invalid ELF header"),
    (
        "erro ao carregar bibliotecas compartilhadas",
        "error while loading shared libraries",
    ),
    (
        "não é possível abrir arquivo compartilhado",
        "cannot open shared object file",
    ),
    (
        "Arquivo ou diretório inexistente",
        "No such file or directory",
    ),
    (
        "Arquivo ou diretório não encontrado",
        "No such file or directory",
    ),
    ("erro de procura por símbolo", "symbol lookup error"),
    ("classe ELF errada", "wrong ELF class"),
    ("cabeçalho de ELF inválido", "invalid ELF header"),
];

/// Writes Windows' loader messages of another display language ([`WINDOWS_MESSAGES`]) and
/// glibc's and GCC's of another locale ([`GNU_MESSAGES`]) in English; the ideographic full
/// stop after one becomes a period.
fn loader_messages_in_english(text: &str) -> std::borrow::Cow<'_, str> {
    // Some German, Italian and Spanish texts are ASCII; an ASCII paste cannot hold the others.
    let ascii = text.is_ascii();
    let mut out: std::borrow::Cow<str> = text.into();
    for (local, english) in WINDOWS_MESSAGES.iter().chain(&GNU_MESSAGES) {
        if (!ascii || local.is_ascii()) && out.contains(local) {
            let with_stop = format!("{local}\u{3002}");
            let replaced = out
                .replace(&with_stop, &format!("{english}."))
                .replace(local, english);
            out = replaced.into();
        }
    }
    out
}

/// Normalises decoded text (see module doc).
pub fn normalize(text: &str) -> String {
    normalize_apart(text).0
}

/// Normalises decoded text, and apart from it the environment reports it carried
/// ([`crate::env_report`]), normalised alike: the reports are no evidence for a cause, but
/// they say which machine the paste came from.
pub fn normalize_apart(text: &str) -> (String, String) {
    let text = strip_ansi(text);
    let text = ascii_typography(&text);
    let text = dedent(&text);
    let text = join_hard_wraps(&text);
    let text = unescape_json_lines(&text);
    let text = crate::unwrap::see_through(&text);
    let (text, reports) = crate::env_report::split_reports(&text);
    (finish(&text), finish(&reports))
}

/// The steps after the reports are set apart: Markdown escapes, loader messages, and the
/// per-line clean-up.
fn finish(text: &str) -> String {
    let text = markdown_unescape(text);
    let text = loader_colon(&text);
    let text = loader_messages_in_english(&text);
    let mut out = String::with_capacity(text.len().min(MAX_INPUT));
    let mut prev: Option<String> = None;
    for raw in text.lines().flat_map(|l| segments(l, MAX_LINE)) {
        let line: String = raw
            .chars()
            .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
            .filter(|&c| c != '\u{FFFD}')
            .collect();
        // Cheap checks first: most lines need none of these regexes (and building them
        // costs more than a short paste's whole search).
        let line: std::borrow::Cow<str> = if maybe_timestamp(&line) {
            TIMESTAMP.replace_all(&line, "").into_owned().into()
        } else {
            line.into()
        };
        let line: std::borrow::Cow<str> = if line.contains("0x") || hex_run(&line, 12) {
            HEX.replace_all(&line, "").into_owned().into()
        } else {
            line
        };
        let line: std::borrow::Cow<str> = if line.contains("/home/")
            || line.contains("/Users/")
            || line.to_ascii_lowercase().contains("\\users\\")
        {
            USER_PATH.replace_all(&line, "~/").into_owned().into()
        } else {
            line
        };
        let line = line.trim_end();
        if line.trim().is_empty() || is_code_fence(line) {
            continue;
        }
        if prev.as_deref() == Some(line) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        prev = Some(line.to_string());
    }
    out
}

/// A Markdown code fence (```` ``` ````, ```` ```python ````): how the paste was set, not
/// what the program printed.
fn is_code_fence(line: &str) -> bool {
    let t = line.trim();
    t.strip_prefix("```").is_some_and(|lang| {
        lang.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '+')
    })
}

/// A long line cut into pieces of at most `max` bytes, at whitespace where
/// there is some near the cut, so an error deep inside a long log line (a
/// minified JSON record, a progress bar line) is still a line of its own.
fn segments(line: &str, max: usize) -> Vec<&str> {
    if line.len() <= max {
        return vec![line];
    }
    let mut out = Vec::new();
    let mut rest = line;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        // Prefer a space in the last eighth of the piece.
        if let Some(sp) = rest[..cut].rfind(' ').filter(|&i| i > cut - cut / 8) {
            cut = sp + 1;
        }
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out.push(rest);
    out
}

/// Escaped log text made into lines again. A JSON log record on a line of its own
/// (`{"level": "error", "msg": "Traceback ...\nRuntimeError: ..."}`) becomes its string
/// values, one after another (the keys and the record's punctuation are not the error); a
/// line that is not a whole record but carries escaped text (a JSON fragment, a Python
/// `repr` of a message: `ERROR: 'Traceback ...\n  File ...'`) has its escapes undone. A
/// Windows path's single backslashes (`C:\new\nvidia`) are not escapes: a line that names a
/// drive that way is left alone.
fn unescape_json_lines(text: &str) -> std::borrow::Cow<'_, str> {
    let record = |l: &str| {
        let t = l.trim();
        t.starts_with('{') && t.ends_with('}') && t.contains("\":")
    };
    let escapes = text.contains("\\n") || text.contains("\\\"") || text.contains("\\u");
    if !escapes && !text.lines().any(record) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('{') && t.ends_with('}') {
            if let Ok(record) = serde_json::from_str::<serde_json::Value>(t) {
                // a record of several fields whose text holds no escape keeps its layout:
                // its fields (`"msg":"Failed to initialize NVML","error":"ERROR_…"`) are
                // read together; one message field is read as the message
                if !escapes && message_fields(&record) != 1 {
                    out.push_str(line);
                    continue;
                }
                push_strings(&record, &mut out);
                continue;
            }
        }
        // without an escape anywhere, only whole records are read
        if !escapes {
            out.push_str(line);
            continue;
        }
        let fragment = t.starts_with('{') || t.starts_with('"') || t.contains("\":");
        let escaped_lines = line.matches("\\n").count() >= 2 && !names_drive_raw(line);
        if fragment || escaped_lines {
            out.push_str(&undo_escapes(&unquote_repr(line)));
        } else {
            out.push_str(line);
        }
    }
    out.into()
}

/// A Python `repr` on a log line without its quotes (`ERROR: 'Traceback ...\nKilled'`
/// becomes `ERROR: Traceback ...\nKilled`): the closing quote is not the last line's text.
fn unquote_repr(line: &str) -> std::borrow::Cow<'_, str> {
    let body = line.trim_end();
    let Some(q) = body.chars().last().filter(|c| matches!(c, '\'' | '"')) else {
        return line.into();
    };
    let Some(open) = body.find(q).filter(|&i| i + 1 < body.len()) else {
        return line.into();
    };
    // the opening quote starts the value: at the line's start or after a separator
    if open > 0 && !body[..open].ends_with([' ', ':', '=']) {
        return line.into();
    }
    format!(
        "{}{}{}",
        &body[..open],
        &body[open + 1..body.len() - 1],
        &line[body.len()..]
    )
    .into()
}

/// How many fields of a record are not its own metadata (time, level, logger…).
fn message_fields(record: &serde_json::Value) -> usize {
    record.as_object().map_or(0, |o| {
        o.keys()
            .filter(|k| !RECORD_META.contains(&k.as_str()))
            .count()
    })
}

/// A log record's own fields: where and when it was logged, not what it says.
const RECORD_META: &[&str] = &[
    "time",
    "timestamp",
    "ts",
    "@timestamp",
    "stream",
    "level",
    "severity",
    "logger",
    "caller",
    "thread",
    "host",
    "hostname",
];

/// Every string in a JSON value, depth first, each ending a line; a number or a boolean
/// keeps its key (`exit_code: 804`), which is all that says what it is. A log record's
/// own fields (its time, stream, level, logger, host) are left out.
fn push_strings(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| push_strings(v, out)),
        serde_json::Value::Object(o) => {
            for (k, v) in o.iter().filter(|(k, _)| !RECORD_META.contains(&k.as_str())) {
                match v {
                    serde_json::Value::Number(_) | serde_json::Value::Bool(_) => {
                        out.push_str(&format!("{k}: {v}\n"));
                    }
                    _ => push_strings(v, out),
                }
            }
        }
        _ => {}
    }
}

/// Whether a line names a Windows drive with a single backslash (`C:\Users`), which an
/// escaped string would have written as `C:\\Users`. The drive is one letter on its own: a
/// label's last letter before an escaped line end (`UserWarning:\n`) is not one.
fn names_drive_raw(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(3)).any(|i| {
        b[i].is_ascii_alphabetic()
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b[i + 1] == b':'
            && b[i + 2] == b'\\'
            && b[i + 3] != b'\\'
    })
}

/// A string literal's escapes undone: `\n`, `\r\n`, `\t`, `\"`, `\'`, `\\` and `\uXXXX`.
fn undo_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => {
                chars.next();
                out.push('\n');
            }
            Some('r') => {
                chars.next();
            }
            Some('t') => {
                chars.next();
                out.push('\t');
            }
            Some(q @ ('"' | '\'' | '\\')) => {
                chars.next();
                out.push(q);
            }
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => {
                        chars.nth(4);
                        out.push(ch);
                    }
                    _ => out.push('\\'),
                }
            }
            _ => out.push('\\'),
        }
    }
    out
}

fn maybe_timestamp(line: &str) -> bool {
    let b = line.as_bytes();
    line.trim_start().starts_with('[')
        || b.windows(3).any(|w| {
            w[0].is_ascii_digit() && (w[1] == b':' || w[1] == b'-') && w[2].is_ascii_digit()
        })
}

fn hex_run(line: &str, n: usize) -> bool {
    let mut run = 0;
    for c in line.bytes() {
        if c.is_ascii_hexdigit() {
            run += 1;
            if run >= n {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Whether the input looks like binary junk rather than text (many NULs/control bytes).
pub fn looks_binary(input: &[u8]) -> bool {
    let sample = &input[..input.len().min(8192)];
    if sample.is_empty() {
        return false;
    }
    let bad = sample
        .iter()
        .filter(|&&b| b == 0 || (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x1b)))
        .count();
    bad * 10 > sample.len()
}

/// UTF-16 text (a byte-order mark before ASCII-heavy UTF-16, or NUL in every
/// other byte of the sample: what PowerShell's `>` and Windows' Notepad write)
/// decoded to a String; `None` for anything else.
pub fn decode_utf16(input: &[u8]) -> Option<String> {
    // The share of code units whose high byte is 0 (ASCII in UTF-16), little-
    // and big-endian, over a sample.
    let ascii_units = |b: &[u8]| {
        let sample = &b[..b.len().min(4096) & !1];
        let pairs = (sample.len() / 2).max(1);
        let le = sample.chunks(2).filter(|c| c[1] == 0 && c[0] != 0).count();
        let be = sample.chunks(2).filter(|c| c[0] == 0 && c[1] != 0).count();
        (le * 100 / pairs, be * 100 / pairs, sample.len())
    };
    let (le, body) = match input {
        // A byte-order mark, and text that reads as UTF-16 after it (0xFF 0xFE
        // may also start invalid UTF-8 in front of ordinary text).
        [0xFF, 0xFE, rest @ ..] if ascii_units(rest).0 >= 30 => (true, rest),
        [0xFE, 0xFF, rest @ ..] if ascii_units(rest).1 >= 30 => (false, rest),
        _ => {
            let (le, be, n) = ascii_units(input);
            if n < 8 {
                return None;
            }
            if le >= 90 {
                (true, input)
            } else if be >= 90 {
                (false, input)
            } else {
                return None;
            }
        }
    };
    let units = body.chunks_exact(2).map(|c| {
        if le {
            u16::from_le_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], c[1]])
        }
    });
    Some(
        char::decode_utf16(units)
            .map(|r| r.unwrap_or('\u{FFFD}'))
            .collect(),
    )
}

/// Printable runs of at least `min` bytes (like `strings`), one per line, for binary input.
pub fn printable_runs(input: &[u8], min: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &b) in input.iter().enumerate() {
        let printable = (0x20..0x7f).contains(&b) || b == b'\t';
        match (printable, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s >= min {
                    out.extend_from_slice(&input[s..i]);
                    out.push(b'\n');
                }
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        if input.len() - s >= min {
            out.extend_from_slice(&input[s..]);
        }
    }
    out
}

#[cfg(test)]
mod utf16_tests {
    use super::decode_utf16;

    #[test]
    fn utf16_with_or_without_a_bom_is_decoded_and_invalid_utf8_is_not() {
        let t = "CUDA error: out of memory";
        let le: Vec<u8> = t.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = t.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(
            decode_utf16(&[&[0xFF, 0xFE][..], &le].concat()).as_deref(),
            Some(t)
        );
        assert_eq!(
            decode_utf16(&[&[0xFE, 0xFF][..], &be].concat()).as_deref(),
            Some(t)
        );
        assert_eq!(decode_utf16(&le).as_deref(), Some(t));
        assert_eq!(
            decode_utf16(&[&[0xFF, 0xFE, 0xC3, 0x28][..], t.as_bytes()].concat()),
            None
        );
        assert_eq!(decode_utf16(t.as_bytes()), None);
    }
}

#[cfg(test)]
mod copy_tests {
    use super::{ascii_typography, dedent, join_hard_wraps, markdown_unescape, normalize};

    #[test]
    fn a_code_block_s_shared_indentation_is_removed_and_the_rest_kept() {
        let block = "    Traceback (most recent call last):\n      File \"x.py\", line 3, in <module>\n\n    Killed\n";
        assert_eq!(
            dedent(block),
            "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n\nKilled\n"
        );
        let flush = "RuntimeError: x\n  File \"y.py\"\n";
        assert_eq!(dedent(flush), flush);
        assert_eq!(dedent("\t\tKilled\n\t\t$ lspci\n"), "Killed\n$ lspci\n");
    }

    #[test]
    fn a_console_s_hard_wraps_are_joined_and_tables_and_bars_are_not() {
        let long = "OSError: [WinError 126] The specified module could not be found. Error loading \"C:/env/Lib/site-packages/torch/lib/cudnn_cnn_infer64_8.dll\" or one of its dependencies.";
        let wrapped: String = long
            .chars()
            .collect::<Vec<_>>()
            .chunks(80)
            .map(|c| c.iter().collect::<String>() + "\n")
            .collect();
        assert_eq!(join_hard_wraps(&wrapped).trim_end(), long);
        // a fill that broke two lines at exactly the same width consumed a space there: its
        // lines stay apart
        let fill = "Of the allocated memory 52.33 GiB is allocated by PyTorch, and 22.81 GiB\nis reserved by PyTorch but unallocated. If reserved and unallocated size\nis large\n";
        assert_eq!(join_hard_wraps(fill), fill);
        // nvidia-smi's table, a rule and a progress bar keep their lines.
        let table = "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2      |\n|-------------------------------+----------------------+----------------------+\n";
        assert_eq!(join_hard_wraps(table), table);
        let bars = "Loading shards: 100%|\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}| 4/4 [00:03<00:00,  1.20it/s] 0123456789 0123456789 0123456789\nLoading shards: 100%|\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}| 4/4 [00:03<00:00,  1.20it/s] 0123456789 0123456789 0123456789\nKilled\n";
        assert_eq!(join_hard_wraps(bars), bars);
        // A product's own line break at a word (torch's CUDA mismatch message breaks after
        // exactly 80 characters) is not a console's wrap: one such line is left alone.
        let torch = "The detected CUDA version (12.1) mismatches the version that was used to compile\nPyTorch (11.7). Please make sure to use the same CUDA versions.\n";
        assert_eq!(torch.lines().next().unwrap().len(), 80);
        assert_eq!(join_hard_wraps(torch), torch);
        // a console's cut inside a path's file name
        let path = "[    6.218840] nvidia 0000:2b:00.0: Direct firmware load for nvidia/570.133.07/g\nsp_ga10x.bin failed with error -2\n";
        assert!(join_hard_wraps(path).contains("/gsp_ga10x.bin failed"));
        // a path at the end of a line and a new line of words stay apart
        let words = "RuntimeError: the library was not found in any of the directories of /usr/local/cuda/lib64\nSegmentation fault (core dumped)\n";
        assert_eq!(join_hard_wraps(words), words);
        // srun -l's task number starts every line: a long line ending in a dot before the next
        // task line is not a version cut after its dot
        let srun = "3: [11/03/2025-14:02:17] [I] [TRT] Local timing cache in use. Profiling results will not be stored.\n3: Killed\n";
        assert_eq!(join_hard_wraps(srun), srun);
        // a fill's break after a closing quote consumed a space: its lines stay apart
        let quoted = "../aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectSmallIndex:\nblock: [2,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize`\nfailed.\n../aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectSmallIndex:\nblock: [2,0,0], thread: [65,0,0] Assertion `srcIndex < srcSelectDimSize`\nfailed.\n";
        assert_eq!(join_hard_wraps(quoted), quoted);
        // Short pastes are never touched.
        assert_eq!(join_hard_wraps("a\nb\n"), "a\nb\n");
    }

    #[test]
    fn one_wrapped_line_is_joined_where_the_cut_shows() {
        // between two letters the cut does not show: a filled paragraph breaks there too
        let filled =
            "RuntimeError: CUDA error: no kernel image is available for execution on\nthe device\n";
        assert_eq!(join_hard_wraps(filled), filled);
        // cut before a space, and inside a version number
        let before_space = "Error: setting up CDI devices: failed to inject devices: failed to stat CDI host\n device \"/dev/dri/renderD129\": no such file or directory\n";
        assert_eq!(
            join_hard_wraps(before_space),
            "Error: setting up CDI devices: failed to inject devices: failed to stat CDI host device \"/dev/dri/renderD129\": no such file or directory\n"
        );
        // cut inside a word: the letters on both sides make a word of the knowledge base,
        // the pieces are not both its words
        let word = "Forge neo refuses to start with `AssertionError: Torch not compiled with CUDA en\nabled`\n";
        assert_eq!(word.lines().next().unwrap().len(), 80);
        assert_eq!(
            join_hard_wraps(word),
            "Forge neo refuses to start with `AssertionError: Torch not compiled with CUDA enabled`\n"
        );
        let symbol = "ImportError: /opt/conda/lib/python3.8/site-packages/awq_ext.cpython-38-x86_64-un\ndefined symbol: _ZN3c104cuda9SetDeviceEi\n";
        assert!(join_hard_wraps(symbol).contains("undefined symbol"));
        // a cut inside a word goes before a next line that looks like a label (`ismatch:`)
        let label = "nvidia-container-cli: initialization error: nvml error: driver/library version m\nismatch: unknown.\n";
        assert!(join_hard_wraps(label).contains("version mismatch: unknown."));
        // one cut inside a word (`impl` / `ementation`) shows a console's wrap: a break
        // between two words elsewhere (`tool` / `chain`) is then its too
        let console = "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported tool\nchain. It is not known to the drivers of this machine; see the notes on the impl\nementation of the runtime\n";
        assert_eq!(
            join_hard_wraps(console),
            "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain. It is not known to the drivers of this machine; see the notes on the implementation of the runtime\n"
        );
        // two words of the knowledge base on either side stay two words
        let words = "Failed to initialize the CUDA runtimes here: the installed NVIDIA display driver\nversion is older than the toolkit's\n";
        assert_eq!(words.lines().next().unwrap().len(), 80);
        assert_eq!(join_hard_wraps(words), words);
        let version = "UserWarning: NVIDIA H100 with CUDA capability sm_90 needs compute capability >= 9.\n0 or 8.9, or ROCm MI300+\n";
        assert!(join_hard_wraps(version).contains(">= 9.0 or 8.9"));
        // a command line followed by its output, lines of a log that start alike, and a
        // sentence followed by a line of its own are left alone
        let command = "$ docker run --rm --gpus all registry.example.com/team/trainer:2025.06 nvidia-smi -L\nFailed to initialize NVML: Driver/library version mismatch\n";
        assert_eq!(join_hard_wraps(command), command);
        let compose = "app-1  | RuntimeError: CUDA error: no kernel image is available for execution on the device\napp-1  | done\n";
        assert_eq!(join_hard_wraps(compose), compose);
        let sentence = "2025-03-02 10:14:09.118441: I cuda_executor.cc:894] so returning NUMA node zero.\ncv2.error: OpenCV(4.10.0) error\n";
        assert_eq!(join_hard_wraps(sentence), sentence);
    }

    #[test]
    fn code_fences_are_not_the_paste() {
        let out = normalize("```python\nRuntimeError: CUDA error: x\n```\n");
        assert_eq!(out, "RuntimeError: CUDA error: x\n");
        // a line that only starts with backticks is kept
        assert!(normalize("```x = 1```\n").contains("x = 1"));
    }

    #[test]
    fn escaped_log_text_becomes_lines_again() {
        use super::unescape_json_lines;
        // a whole JSON record: its strings, and its numbers with their keys
        let record = "{\"level\": \"error\", \"code\": 804, \"msg\": \"Traceback (most recent call last):\\nRuntimeError: CUDA error: forward compatibility was attempted on non supported HW\"}\n";
        let out = unescape_json_lines(record);
        assert!(
            out.contains("\nRuntimeError: CUDA error: forward compatibility"),
            "{out}"
        );
        assert!(out.contains("code: 804\n"), "{out}");
        assert!(
            !out.contains("error\n"),
            "the record's level is not its text: {out}"
        );
        assert!(!out.contains("\"msg\""), "{out}");
        // a Python repr on a log line, with a \\u escape
        let repr = "ERROR:worker:'Traceback (most recent call last):\\n  File \"x.py\", line 1\\nOSError: libcudart.so.12: cannot open shared object file \\u65e0'\n";
        let out = unescape_json_lines(repr);
        assert!(out.contains("\nOSError: libcudart.so.12"), "{out}");
        assert!(out.contains('\u{65e0}'), "{out}");
        // a Windows path's single backslashes are not escapes
        let path = "OSError: [WinError 126] Error loading \"C:\\new\\nvidia\\nccl\\lib\\x.dll\"\n";
        assert_eq!(unescape_json_lines(path), path);
        // a repr's quotes are not its text: its last line ends as printed
        let killed = "ERROR: 'Building the TensorRT Engine\\n\\nKilled'\n";
        assert_eq!(
            unescape_json_lines(killed),
            "ERROR: Building the TensorRT Engine\n\nKilled\n"
        );
        // a record without an escape is read too (its message, not its keys)
        let plain = "{\"level\": \"error\", \"msg\": \"no kernel image is available\"}\n";
        assert_eq!(unescape_json_lines(plain), "no kernel image is available\n");
        // a label's colon before an escaped line end is not a drive (`UserWarning:\n`)
        let warning = "ERROR:worker:'/srv/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:283: UserWarning:\\n    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\\n    Minimum and Maximum cuda capability supported by this version of PyTorch is\\n'\n";
        let out = unescape_json_lines(warning);
        assert!(out.contains("UserWarning:\n    Found GPU0"), "{out}");
    }

    #[test]
    fn copied_typography_turns_back_into_ascii() {
        assert_eq!(
            ascii_typography(
                "device=\u{2018}cuda:0\u{2019} \u{201C}x\u{201D}\u{00A0}a\u{200B}b \u{2014}flag"
            ),
            "device='cuda:0' \"x\" ab -flag"
        );
        assert_eq!(
            ascii_typography("RuntimeError\u{FF1A}CUDA error\u{FF08}209\u{FF09}"),
            "RuntimeError:CUDA error(209)"
        );
        assert_eq!(
            ascii_typography("&quot;libcudnn.so.9&quot; &lt;&amp;&gt; it&#39;s"),
            "\"libcudnn.so.9\" <&> it's"
        );
        assert_eq!(
            ascii_typography("RuntimeError: CUDA error<br>CUDA kernel errors&nbsp;might<br />x"),
            "RuntimeError: CUDA error\nCUDA kernel errors might\nx"
        );
        // Already ASCII without references: borrowed, unchanged.
        assert!(matches!(
            ascii_typography("plain ascii"),
            std::borrow::Cow::Borrowed(_)
        ));
        // A CJK sentence keeps its ideographs.
        assert_eq!(
            ascii_typography("\u{8BAD}\u{7EC3}\u{65F6}"),
            "\u{8BAD}\u{7EC3}\u{65F6}"
        );
    }

    #[test]
    fn the_loader_s_colon_is_put_back_after_a_soname_and_nowhere_else() {
        let n =
            normalize("ImportError: libcudnn.so.6 cannot open shared object file: No such file\n");
        assert!(
            n.contains("libcudnn.so.6: cannot open shared object file"),
            "{n}"
        );
        let kept = "OSError: libcudart.so.12: cannot open shared object file: No such file\n";
        assert_eq!(normalize(kept), kept);
        let other = "we cannot open shared object file handles here\n";
        assert_eq!(normalize(other), other);
    }

    #[test]
    fn markdown_escapes_are_removed_after_windows_paths() {
        assert_eq!(
            markdown_unescape("libcudnn\\_ops\\_infer.so.8 \\*\\*kwargs \\[rank0\\]"),
            "libcudnn_ops_infer.so.8 **kwargs [rank0]"
        );
        // torch's own `torch\_C` in a Windows path is a path, not an escape: were the escapes
        // removed first, it would read `torch_C`.
        let n = normalize("ImportError: DLL load failed while importing _C: C:\\Users\\me\\env\\Lib\\site-packages\\torch\\_C.cp311-win_amd64.pyd");
        assert!(n.contains("torch/_C.cp311-win_amd64.pyd"), "{n}");
    }
}

#[cfg(test)]
mod loader_message_tests {
    use super::normalize;

    #[test]
    fn windows_loader_messages_in_other_languages_read_as_english() {
        let n = normalize(
            "OSError: [WinError 126] 找不到指定的模块。 Error loading \"C:/env/torch/lib/c10.dll\"",
        );
        assert!(
            n.contains("[WinError 126] The specified module could not be found. Error loading"),
            "{n}"
        );
        let n = normalize("ImportError: DLL load failed while importing _C: 指定されたプロシージャが見つかりません。");
        assert!(
            n.ends_with("importing _C: The specified procedure could not be found.\n"),
            "{n}"
        );
        let n = normalize(
            "OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading \"x.dll\"",
        );
        assert!(
            n.contains("[WinError 1455] The paging file is too small for this operation to complete. Error"),
            "{n}"
        );
        let n =
            normalize("ImportError: DLL load failed: Das angegebene Modul wurde nicht gefunden.");
        assert!(
            n.contains("DLL load failed: The specified module could not be found."),
            "{n}"
        );
        // glibc and GCC under a zh_CN locale (full-width colons are ASCII by then)
        let n =
            normalize("nvidia/nv.c:30:10: 致命错误：nv-firmware.h：没有那个文件或目录\n编译中断。");
        assert!(
            n.contains("nv.c:30:10: fatal error: nv-firmware.h: No such file or directory\ncompilation terminated."),
            "{n}"
        );
        let n = normalize(
            "./app: 加载共享库时出错: libcudart.so.12: 无法打开共享对象文件: 没有那个文件或目录",
        );
        assert!(n.contains("error while loading shared libraries: libcudart.so.12: cannot open shared object file: No such file or directory"), "{n}");
        // glibc's own translations in other locales (po/*.po), old and new wordings
        for (paste, english) in [
            (
                "python3: Fehler beim Nachschlagen des Symbols: /opt/x/libtorch_cuda.so: undefined symbol: cudaGetDriverEntryPointByVersion",
                "python3: symbol lookup error: /opt/x/libtorch_cuda.so",
            ),
            (
                "./main: 载入共享库时出错: libcublas.so.12: 无法打开共享目标文件: 没有那个文件或目录",
                "./main: error while loading shared libraries: libcublas.so.12: cannot open shared object file: No such file or directory",
            ),
            (
                "OSError: libcudnn_ops_infer.so.8: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis nicht gefunden",
                "libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory",
            ),
            (
                "ImportError: libcudart.so.11.0: 共有オブジェクトファイルを開けません: そのようなファイルやディレクトリはありません",
                "libcudart.so.11.0: cannot open shared object file: No such file or directory",
            ),
            (
                "./llama-server: ошибка при загрузке разделяемых библиотек: libcuda.so.1: невозможно открыть разделяемый объектный файл: Нет такого файла или каталога",
                "error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory",
            ),
            (
                "ImportError: libnvinfer.so.8: 無法開啟共用物件: 沒有此一檔案或目錄",
                "libnvinfer.so.8: cannot open shared object file: No such file or directory",
            ),
            (
                "ImportError: libcudart.so.12: não é possível abrir arquivo compartilhado: Arquivo ou diretório inexistente",
                "libcudart.so.12: cannot open shared object file: No such file or directory",
            ),
            (
                // ASCII in the paste, so only the ASCII texts are looked for
                "./app: error while loading shared libraries: libcudart.so.12: cannot open shared object file: Datei oder Verzeichnis nicht gefunden",
                "cannot open shared object file: No such file or directory",
            ),
        ] {
            let n = normalize(paste);
            assert!(n.contains(english), "{paste} read as {n}");
        }
        // other text in those languages is left as it is
        assert_eq!(normalize("模块加载完成"), "模块加载完成\n");
    }
}
