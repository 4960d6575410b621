//! git's `:(glob)` pathspec matching of repository paths, shared by the config's protected
//! paths and the guard.

use bstr::BStr;
use gix_glob::wildmatch::Mode;

/// git's `:(glob)` matching of a repository path: `*` and `?` stay within a directory, `**`
/// crosses them.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    gix_glob::wildmatch(
        BStr::new(pattern.as_bytes()),
        BStr::new(path.as_bytes()),
        Mode::NO_MATCH_SLASH_LITERAL,
    )
}
