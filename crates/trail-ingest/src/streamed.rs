//! Files whose source hands out their sessions one at a time ([`Source::streams_sessions`]: a
//! chat service's data export, thousands of conversations in one `conversations.json`): the
//! sessions go to the writer in pieces of about [`PIECE_WEIGHT`] bytes as they are parsed, so
//! the file's sessions are never all in memory at once (a 155 MB export held them all: 730 MB).
//!
//! The pieces follow the protocol of an appendable file read in chunks: the first replaces
//! what the store held of the file (`resumed_from` none), each later one continues it
//! (`continuation`, `resumed_from` the `bytes_parsed` of the piece before, which the store's
//! compare-and-swap checks). Every piece but the last records a fingerprint that cannot match
//! the file (its size the bytes read so far, its modification time inverted), so a run stopped
//! between pieces reads the file again next time; the last one carries the file's fingerprint, its
//! problems and notes.

use trail_sources::{ParseRequest, Source};
use trail_store::{FileRecord, Fingerprint};

use crate::{prefix_hashes, Parsed, Planned, NO_SESSION_NOTE};

/// The weight ([`crate::record_weight`]) of the sessions one piece holds before it is sent.
const PIECE_WEIGHT: usize = 4 << 20;

/// Where a streamed file's pieces stand.
struct Pieces<'a> {
    item: &'a Planned,
    new_record: &'a dyn Fn() -> FileRecord,
    emit: &'a mut dyn FnMut(Parsed) -> bool,
    pending: Vec<trail_model::Session>,
    weight: usize,
    /// `bytes_parsed` of the last piece sent, if one was.
    sent_to: Option<u64>,
    /// Bytes read so far and already counted in a piece.
    counted: u64,
}

impl Pieces<'_> {
    /// Takes one session; sends the pending ones when they weigh a piece. Returns false when
    /// the writer is gone.
    fn take(&mut self, session: trail_model::Session, read: u64) -> bool {
        self.weight += crate::session_weight(&session);
        self.pending.push(session);
        if self.weight < PIECE_WEIGHT {
            return true;
        }
        let mut record = self.record();
        // Never the file's own fingerprint; the same for the same file read again, so a
        // piece a stopped run wrote is not written twice.
        record.fingerprint = Fingerprint {
            size: read,
            mtime_ns: !self.item.fingerprint.mtime_ns,
            inode: self.item.fingerprint.inode,
        };
        record.bytes_parsed = read;
        self.send(record, read)
    }

    /// A record continuing the pieces sent, with the pending sessions.
    fn record(&mut self) -> FileRecord {
        let mut record = (self.new_record)();
        record.resumed_from = self.sent_to;
        record.continuation = self.sent_to.is_some();
        record.sessions = std::mem::take(&mut self.pending);
        self.weight = 0;
        record
    }

    fn send(&mut self, record: FileRecord, read: u64) -> bool {
        let first = self.sent_to.is_none();
        let bytes = read.saturating_sub(self.counted);
        self.counted = self.counted.max(read);
        self.sent_to = Some(record.bytes_parsed);
        (self.emit)(Parsed::new(record, bytes, first))
    }
}

/// Parses `item` with `src`'s [`Source::parse_each`], handing its sessions to `emit` in pieces
/// (see the module).
pub(crate) fn parse_streamed(
    src: &dyn Source,
    item: &Planned,
    new_record: &dyn Fn() -> FileRecord,
    emit: &mut dyn FnMut(Parsed) -> bool,
) {
    let mut pieces = Pieces {
        item,
        new_record,
        emit,
        pending: Vec::new(),
        weight: 0,
        sent_to: None,
        counted: 0,
    };
    let request = ParseRequest {
        path: &item.path,
        resume: None,
        max_bytes: None,
    };
    let mut gone = false;
    let parsed = src.parse_each(request, &mut |session, read| {
        gone = !pieces.take(session, read);
        !gone
    });
    if gone {
        return;
    }
    let p = match parsed {
        Ok(p) => p,
        Err(e) => {
            // What earlier pieces wrote stays, under a fingerprint the next run reads again.
            let mut record = new_record();
            record.error = Some(e.to_string());
            let first = pieces.sent_to.is_none();
            (pieces.emit)(Parsed::new(record, 0, first));
            return;
        }
    };
    let mut record = pieces.record();
    let (head, tail) = prefix_hashes(&item.path, p.bytes_parsed).unzip();
    record.head_hash = head;
    record.tail_hash = tail;
    record.issues = p.issues;
    record.bytes_parsed = p.bytes_parsed;
    record.lines = p.lines;
    record.notes = p.notes;
    if let Some(why) = p.no_session {
        record.notes.push(format!("{NO_SESSION_NOTE}{why}"));
    }
    record.title_hints = p.title_hints;
    pieces.send(record, p.bytes_read);
}
