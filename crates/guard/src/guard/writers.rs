//! The files a program known to write writes, from its arguments, and where an archive
//! program unpacks: what the guard judges as written, moved or deleted.

use super::words::Arg;

/// Programs that remove the files they are given.
const REMOVERS: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "srm",
    "trash",
    "trash-put",
    "gio",
];

/// Programs that write the files they are given (their contents, mode, owner or times).
const MODIFIERS: &[&str] = &[
    "touch", "truncate", "chmod", "chown", "chgrp", "chattr", "setfacl", "mkdir", "tee", "ed",
    "ex", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "split", "mkfifo", "mknod",
    "vi", "vim", "nvim", "nano", "emacs", "code", "sponge", "utimes", "setfattr",
];

/// Programs that write only the files their options name: the options.
const OUTPUT_OPTIONS: &[(&str, &[&str])] = &[
    ("sort", &["-o", "--output"]),
    ("tree", &["-o"]),
    (
        "curl",
        &[
            "-o",
            "--output",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--output-dir",
        ],
    ),
    (
        "wget",
        &[
            "-O",
            "--output-document",
            "-P",
            "--directory-prefix",
            "-o",
            "--output-file",
        ],
    ),
];

/// The files a program known to write writes, from its arguments: each with whether writing
/// it takes away what a directory of that name holds (a removal or a move's source).
/// `None`: not a program known to write.
pub fn written(name: &str, args: &[Arg]) -> Option<Vec<(Arg, bool)>> {
    let operands: Vec<&Arg> = args
        .iter()
        .filter(|a| !a.text.starts_with('-') || !a.is_known())
        .collect();
    let all = |removes: bool| {
        operands
            .iter()
            .map(|a| ((*a).clone(), removes))
            .collect::<Vec<_>>()
    };
    if REMOVERS.contains(&name) {
        return Some(all(true));
    }
    if MODIFIERS.contains(&name) {
        return Some(modified(name, args, all(false)));
    }
    if let Some((_, options)) = OUTPUT_OPTIONS.iter().find(|(n, _)| *n == name) {
        return Some(kept(option_values(args, options)));
    }
    Some(match name {
        "dd" => args
            .iter()
            .filter_map(|a| {
                a.text.strip_prefix("of=").map(|v| {
                    (
                        Arg {
                            text: v.to_string(),
                            ..a.clone()
                        },
                        false,
                    )
                })
            })
            .collect(),
        "sed" | "perl" | "ruby" if in_place(name, args) => edited_in_place(name, args, all(false)),
        "awk" | "gawk" | "mawk" if args.iter().any(|a| a.text.contains("inplace")) => all(false),
        "patch" => patched(args),
        // `xxd IN OUT` writes OUT; `xxd -r IN OUT` too; `uniq IN OUT` alike.
        "xxd" | "uniq" => operands
            .get(1)
            .map(|a| ((*a).clone(), false))
            .into_iter()
            .collect(),
        "cp" | "ln" | "rsync" | "scp" | "link" | "install" => {
            let mut out: Vec<(Arg, bool)> = operands
                .last()
                .map(|a| ((*a).clone(), false))
                .into_iter()
                .collect();
            out.extend(kept(option_values(args, &["-t", "--target-directory"])));
            out
        }
        "mv" => {
            let mut out: Vec<(Arg, bool)> = operands.iter().map(|a| ((*a).clone(), true)).collect();
            // The destination stays.
            if let Some(last) = out.last_mut() {
                last.1 = false;
            }
            out.extend(kept(option_values(args, &["-t", "--target-directory"])));
            out
        }
        _ => return None,
    })
}

/// Files written that leave what they hold in place.
fn kept(files: Vec<Arg>) -> Vec<(Arg, bool)> {
    files.into_iter().map(|a| (a, false)).collect()
}

/// The values of `options` in `args`: the next word, `--opt=value`, or `-ovalue`.
fn option_values(args: &[Arg], options: &[&str]) -> Vec<Arg> {
    let mut out = Vec::new();
    for (at, arg) in args.iter().enumerate() {
        for option in options {
            if arg.text == *option {
                out.extend(args.get(at + 1).cloned());
            } else if let Some(v) = arg.text.strip_prefix(option) {
                if option.len() > 2 && v.starts_with('=') {
                    out.push(Arg {
                        text: v[1..].to_string(),
                        ..arg.clone()
                    });
                } else if option.len() == 2 && !v.is_empty() && !option.starts_with("--") {
                    out.push(Arg {
                        text: v.to_string(),
                        ..arg.clone()
                    });
                }
            }
        }
    }
    out
}

/// The operands a [`MODIFIERS`] program writes: all, but the mode or owner that comes first,
/// unless the mode is written as an option (`chmod -x FILE`).
fn modified(name: &str, args: &[Arg], mut out: Vec<(Arg, bool)>) -> Vec<(Arg, bool)> {
    let dash_mode = name == "chmod"
        && args.iter().any(|a| {
            a.text.len() > 1
                && a.text.starts_with('-')
                && a.text[1..].chars().all(|c| "rwxXst".contains(c))
        });
    if matches!(name, "chmod" | "chown" | "chgrp") && !dash_mode && !out.is_empty() {
        out.remove(0);
    }
    out
}

/// `sed -i`, `perl -i`, `ruby -i`: the program edits its files in place.
fn in_place(name: &str, args: &[Arg]) -> bool {
    args.iter().any(|a| {
        a.text.starts_with("-i")
            || a.text.starts_with("--in-place")
            || (a.text.starts_with("-p") && a.text.contains('i'))
            || (a.text.starts_with('-')
                && !a.text.starts_with("--")
                && a.text.contains('i')
                && name == "sed")
    })
}

/// The files an in-place edit writes: its operands but the script.
fn edited_in_place(name: &str, args: &[Arg], mut files: Vec<(Arg, bool)>) -> Vec<(Arg, bool)> {
    // The script is the first operand (unless `-e`/`-f` gave it).
    let scripted = args
        .iter()
        .any(|a| matches!(a.text.as_str(), "-e" | "-f" | "--expression" | "--file"));
    if !scripted && name == "sed" && !files.is_empty() {
        files.remove(0);
    }
    if name != "sed" {
        // `perl -i -pe 'CODE' FILES`: the code is the value of an option ending in `e`.
        let code: Vec<&Arg> = args
            .windows(2)
            .filter(|w| w[0].text.starts_with('-') && w[0].text.ends_with('e'))
            .map(|w| &w[1])
            .collect();
        files.retain(|(a, _)| !code.iter().any(|c| std::ptr::eq(*c, a) || c.text == a.text));
    }
    files
}

/// `patch FILE < P` patches FILE; `-o OUT` writes OUT.
fn patched(args: &[Arg]) -> Vec<(Arg, bool)> {
    let mut out = kept(option_values(args, &["-o", "--output"]));
    let takes_value = [
        "-p", "-d", "-i", "-o", "-r", "-z", "-B", "-Y", "-V", "-D", "-F",
    ];
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
        } else if takes_value.contains(&arg.text.as_str()) {
            skip = true;
        } else if !arg.text.starts_with('-') {
            out.push((arg.clone(), false));
            break;
        }
    }
    out
}

/// `tar x…`, `unzip`, `cpio -i`, `7z x`, `bsdtar -x`: an archive unpacked, and where (`None`:
/// here). `None` when the command does not unpack.
pub fn unpacks(name: &str, args: &[Arg]) -> Option<Option<Arg>> {
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let directory = |options: &[&str]| -> Option<Arg> {
        texts
            .iter()
            .position(|t| options.contains(t))
            .and_then(|at| args.get(at + 1).cloned())
            .or_else(|| {
                args.iter().find_map(|a| {
                    options.iter().find_map(|o| {
                        a.text.strip_prefix(&format!("{o}=")).map(|v| Arg {
                            text: v.to_string(),
                            ..a.clone()
                        })
                    })
                })
            })
    };
    match name {
        "tar" | "bsdtar" | "gtar" => {
            let first = texts.first().copied().unwrap_or_default();
            let extracts = texts
                .iter()
                .any(|t| matches!(*t, "--extract" | "--get" | "-x"))
                || (!first.starts_with("--") && first.trim_start_matches('-').contains('x'))
                || texts
                    .iter()
                    .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('x'));
            extracts.then(|| directory(&["-C", "--directory"]))
        }
        "unzip" => (!texts
            .iter()
            .any(|t| matches!(*t, "-l" | "-t" | "-v" | "-Z" | "-p")))
        .then(|| directory(&["-d"])),
        "cpio" => texts
            .iter()
            .any(|t| {
                t.starts_with("-i")
                    || *t == "--extract"
                    || (t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
            })
            .then(|| directory(&["-D", "--directory"])),
        "7z" | "7za" | "7zr" => texts
            .first()
            .is_some_and(|t| matches!(*t, "x" | "e"))
            .then(|| {
                args.iter().find_map(|a| {
                    a.text.strip_prefix("-o").map(|v| Arg {
                        text: v.to_string(),
                        ..a.clone()
                    })
                })
            }),
        "ar" => texts
            .first()
            .is_some_and(|t| t.trim_start_matches('-').contains('x'))
            .then_some(None),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        words.iter().map(|w| Arg::known(*w)).collect()
    }

    #[test]
    fn archives_say_where_they_unpack() {
        assert_eq!(unpacks("tar", &args(&["xzf", "a.tgz"])), Some(None));
        assert_eq!(
            unpacks("tar", &args(&["-xzf", "a.tgz", "-C", "/tmp/x"])),
            Some(Some(Arg::known("/tmp/x")))
        );
        assert_eq!(unpacks("tar", &args(&["czf", "a.tgz", "src"])), None);
        assert_eq!(unpacks("unzip", &args(&["-l", "a.zip"])), None);
        assert_eq!(
            unpacks("unzip", &args(&["a.zip", "-d", "out"])),
            Some(Some(Arg::known("out")))
        );
    }

    #[test]
    fn writers_name_what_they_write() {
        let texts = |name: &str, words: &[&str]| -> Vec<(String, bool)> {
            written(name, &args(words))
                .unwrap_or_default()
                .into_iter()
                .map(|(a, removes)| (a.text, removes))
                .collect()
        };
        let t = |s: &str, r: bool| (s.to_string(), r);
        assert_eq!(
            texts("rm", &["-rf", "a", "b"]),
            [t("a", true), t("b", true)]
        );
        assert_eq!(
            texts("mv", &["a", "b", "c"]),
            [t("a", true), t("b", true), t("c", false)]
        );
        assert_eq!(texts("chmod", &["+x", "f"]), [t("f", false)]);
        assert_eq!(texts("chmod", &["-x", "f"]), [t("f", false)]);
        assert_eq!(texts("sed", &["-i", "s/a/b/", "f"]), [t("f", false)]);
        assert_eq!(
            texts("sed", &["-i", "-e", "s/a/b/", "f"]),
            [t("s/a/b/", false), t("f", false)]
        );
        assert_eq!(
            texts("perl", &["-pi", "-e", "s/a/b/", "f"]),
            [t("f", false)]
        );
        assert_eq!(texts("dd", &["if=a", "of=b"]), [t("b", false)]);
        assert_eq!(texts("cp", &["-r", "a", "b", "dest"]), [t("dest", false)]);
        assert_eq!(written("cat", &args(&["a"])), None);
    }
}
