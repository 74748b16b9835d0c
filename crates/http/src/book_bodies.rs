//! `GET …/book` bodies kept as rendered bytes (ADR 0014). The engine hands out the same
//! `Arc`s for a book's levels and its instrument until either changes; a body rendered
//! from them is reused, per company (each sees its own share), until they change.

use axum::body::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use upstairs_domain::{CompanyId, InstrumentId};
use upstairs_engine::model::Instrument;
use upstairs_engine::orders::{Book, BookLevels};

/// At most this many companies' bodies per instrument; then they start over.
const MAX_BODIES: usize = 64;

#[derive(Default)]
pub struct BookBodies {
    slots: Mutex<HashMap<InstrumentId, Rendered>>,
}

struct Rendered {
    instrument: Arc<Instrument>,
    snapshot: Arc<BookLevels>,
    bodies: HashMap<Option<CompanyId>, Bytes>,
}

impl BookBodies {
    /// The body of `book` as its company sees it: kept, or rendered by `render` and kept.
    pub fn body(&self, book: &Book, render: impl FnOnce(&Book) -> Bytes) -> Bytes {
        let id = book.instrument.instrument_id;
        let current =
            |r: &Rendered| Arc::ptr_eq(&r.instrument, &book.instrument) && Arc::ptr_eq(&r.snapshot, &book.snapshot);
        {
            let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(body) = slots.get(&id).filter(|r| current(r)).and_then(|r| r.bodies.get(&book.own)) {
                return body.clone();
            }
        }
        let body = render(book);
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = slots.entry(id).or_insert_with(|| Rendered {
            instrument: book.instrument.clone(),
            snapshot: book.snapshot.clone(),
            bodies: HashMap::new(),
        });
        if !current(slot) {
            *slot = Rendered {
                instrument: book.instrument.clone(),
                snapshot: book.snapshot.clone(),
                bodies: HashMap::new(),
            };
        }
        if slot.bodies.len() >= MAX_BODIES {
            slot.bodies.clear();
        }
        slot.bodies.insert(book.own, body.clone());
        body
    }
}
