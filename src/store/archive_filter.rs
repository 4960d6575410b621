//! The archive's name filter (docs/refs.md, "The archive"): a small blob beside the archive
//! commit's flat index that tells, without reading that index, which names the index certainly
//! does not hold, so that what `sync` pays to look up its live names does not grow with the
//! number of archived workflows.
//!
//! The blob is a line naming its format, then the first [`WIDTH`] bytes of the SHA-1 of every
//! name the index holds, sorted and without repeats. Its tree entry ([`ENTRY`]) is what makes
//! it travel with the archive; the commit's [`HEADER`] names it, so that a reader finds it
//! without reading the tree (on 10,000 archived workflows, reading the tree was two thirds of
//! what `sync` spent on the archive: benches/orchestrate.rs, the scale bench). A reader that
//! does not know the format, or an archive commit without the header (written by an older
//! release, which also drops the entry when it writes over it), reads the whole index.

use gix::ObjectId;

/// The filter's entry in the archive commit's tree: a blob, where every workflow is a gitlink,
/// under a name no workflow can have (`store::valid_workflow_name` refuses a leading dot), so
/// that every reader of the index, this release's or an older one's, and the server hook's
/// (`git ls-tree`, gitlinks only), passes it by.
pub const ENTRY: &str = ".archive-filter";

/// The archive commit's header naming the filter's blob: git keeps a header it does not know
/// and shows it only in raw output.
pub const HEADER: &str = "orchestrate-archive-filter";

/// The first line of the blob: the format; another line is read as no filter.
const FORMAT: &[u8] = b"git-orchestrate archive filter 1: sha1 prefixes of 4 bytes\n";

/// Bytes of each name's SHA-1 kept: with 10,000 names held, a name not held passes for one
/// once in 430,000 (10,000 / 2^32), and the blob is 40 kB where the index is 340 kB.
const WIDTH: usize = 4;

/// The key of `name`: the first [`WIDTH`] bytes of its SHA-1; `None` only where the hasher
/// detects a collision attack (no name of ours is one).
fn key(name: &str) -> Option<[u8; WIDTH]> {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(name.as_bytes());
    let id: ObjectId = hasher.try_finalize().ok()?;
    let mut out = [0; WIDTH];
    out.copy_from_slice(&id.as_bytes()[..WIDTH]);
    Some(out)
}

/// The filter's blob for an index holding `names`; `None` when a name has no key (then the
/// archive commit gets no filter, and is read whole).
pub fn encode<'a>(names: impl Iterator<Item = &'a str>) -> Option<Vec<u8>> {
    let mut keys = names.map(key).collect::<Option<Vec<_>>>()?;
    keys.sort_unstable();
    keys.dedup();
    let mut out = Vec::with_capacity(FORMAT.len() + keys.len() * WIDTH);
    out.extend_from_slice(FORMAT);
    for k in keys {
        out.extend_from_slice(&k);
    }
    Some(out)
}

/// A filter as read from its blob.
pub(super) struct Filter<'a> {
    keys: &'a [u8],
}

impl<'a> Filter<'a> {
    /// The filter `blob` holds; `None` when it is not one this release reads (then the whole
    /// index is read, as for an archive without a filter).
    pub(super) fn decode(blob: &'a [u8]) -> Option<Self> {
        let keys = blob.strip_prefix(FORMAT)?;
        (keys.len() % WIDTH == 0).then_some(Filter { keys })
    }

    /// False when the index certainly does not hold `name`; true when it may (then the index
    /// tells).
    pub(super) fn may_hold(&self, name: &str) -> bool {
        let Some(wanted) = key(name) else {
            return true;
        };
        let (mut low, mut high) = (0, self.keys.len() / WIDTH);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.keys[mid * WIDTH..(mid + 1) * WIDTH].cmp(&wanted[..]) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_holds_every_name_encoded_and_rules_out_others() {
        let names: Vec<String> = (0..1000).map(|i| format!("f{i:05}")).collect();
        let blob = encode(names.iter().map(String::as_str)).unwrap();
        assert_eq!(blob.len(), FORMAT.len() + 1000 * WIDTH);
        let filter = Filter::decode(&blob).unwrap();
        assert!(names.iter().all(|n| filter.may_hold(n)));
        let passed = (0..1000)
            .filter(|i| filter.may_hold(&format!("live-{i}")))
            .count();
        assert_eq!(
            passed, 0,
            "1,000 keys of 2^32: none of 1,000 others collides"
        );
    }

    #[test]
    fn an_unknown_format_is_no_filter() {
        assert!(Filter::decode(b"git-orchestrate archive filter 2: bloom\n").is_none());
        let mut blob = encode(["a"].into_iter()).unwrap();
        blob.push(0);
        assert!(Filter::decode(&blob).is_none(), "a key cut short");
        assert!(Filter::decode(FORMAT).is_some_and(|f| !f.may_hold("a")));
    }
}
