//! The sessions of a router in order of first appearance, compactly: the
//! one thing a router keeps for every session it has seen, so a session
//! costs its name's bytes and one entry here, not an allocation.

/// One session's place in the order.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// The session without a name.
    Unnamed,
    /// A named session: its name's bytes in `names`.
    Named { start: usize, len: usize },
    /// Finished or closed.
    Gone,
}

/// Sessions in order of first appearance.
#[derive(Debug, Default)]
pub(super) struct Appearances {
    names: String,
    entries: Vec<Entry>,
    /// Entries before this one are gone.
    first: usize,
    live: usize,
}

impl Appearances {
    pub(super) fn push(&mut self, session: Option<&str>) {
        let entry = match session {
            None => Entry::Unnamed,
            Some(name) => {
                let start = self.names.len();
                self.names.push_str(name);
                Entry::Named { start, len: name.len() }
            }
        };
        self.entries.push(entry);
        self.live += 1;
    }

    /// Sessions not gone.
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// The sessions not gone, in order of first appearance.
    pub(super) fn iter(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        self.entries[self.first..].iter().filter_map(|&entry| self.name(entry))
    }

    fn name(&self, entry: Entry) -> Option<Option<&str>> {
        match entry {
            Entry::Unnamed => Some(None),
            Entry::Named { start, len } => Some(self.names.get(start..start + len)),
            Entry::Gone => None,
        }
    }

    /// Marks `session` gone; `false` if it is not here.
    pub(super) fn remove(&mut self, session: Option<&str>) -> bool {
        let found = (self.first..self.entries.len()).find(|&at| self.name(self.entries[at]) == Some(session));
        let Some(at) = found else { return false };
        self.entries[at] = Entry::Gone;
        self.live -= 1;
        true
    }

    /// The session seen first and not gone, now marked gone.
    pub(super) fn pop_first(&mut self) -> Option<Option<String>> {
        while let Some(&entry) = self.entries.get(self.first) {
            self.first += 1;
            if let Some(session) = self.name(entry) {
                let session = session.map(str::to_owned);
                self.live -= 1;
                if self.live == 0 {
                    *self = Appearances::default();
                }
                return Some(session);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_come_back_in_order_of_first_appearance() {
        let mut order = Appearances::default();
        order.push(Some("b"));
        order.push(None);
        order.push(Some("a"));
        order.push(Some(""));
        assert!(order.remove(Some("a")));
        assert!(!order.remove(Some("a")), "gone already");
        assert_eq!(order.len(), 3);
        assert_eq!(order.pop_first(), Some(Some("b".to_owned())));
        assert_eq!(order.pop_first(), Some(None));
        assert_eq!(order.pop_first(), Some(Some(String::new())), "an empty name is a name");
        assert_eq!(order.pop_first(), None);
        assert_eq!(order.len(), 0);
    }
}
