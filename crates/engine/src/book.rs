//! The book as the caches hold it (ADR 0014) and every view of it is cut from: price
//! levels with each company's share set apart. Part of the shared core (ADR 0032).

use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use upstairs_domain::CompanyId;
use upstairs_domain::order::Direction;

use crate::model::{BookRow, Instrument};

/// One price level of the anonymous book.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    pub price: Decimal,
    pub buy_quantity: i64,
    pub sell_quantity: i64,
    /// The caller's company's share of the level (zero on the shared topic).
    pub own_buy_quantity: i64,
    pub own_sell_quantity: i64,
}

#[derive(Clone, Debug)]
pub struct Book {
    pub instrument: Arc<Instrument>,
    /// The levels as cached (ADR 0014): the same `Arc` until the book or its instrument
    /// changes, so the edge may keep what it rendered from it.
    pub snapshot: Arc<BookLevels>,
    /// Whose share `levels` marks (none on the shared topic).
    pub own: Option<CompanyId>,
}

impl Book {
    /// Best (highest) price first, the `own` company's share marked.
    pub fn levels(&self) -> Vec<Level> {
        self.snapshot.seen_by(self.own)
    }

    pub fn best_buy(&self) -> Option<Decimal> {
        self.snapshot.levels.iter().filter(|l| l.buy_quantity > 0).map(|l| l.price).max()
    }

    pub fn best_sell(&self) -> Option<Decimal> {
        self.snapshot.levels.iter().filter(|l| l.sell_quantity > 0).map(|l| l.price).min()
    }
}

/// Folds the per-company book rows into price levels, best (highest) price first,
/// marking the `own` company's share.
pub fn book_levels(rows: &[BookRow], own: Option<CompanyId>) -> Vec<Level> {
    BookLevels::of(rows).seen_by(own)
}

/// A book's levels with every company's share set apart, so that each caller's view
/// (its own share marked) is a copy and a few additions (cached: ADR 0014).
#[derive(Debug)]
pub struct BookLevels {
    /// Best (highest) price first, no own shares.
    levels: Vec<Level>,
    /// Per company: (index into `levels`, buy, sell).
    shares: HashMap<CompanyId, Vec<(usize, i64, i64)>>,
}

impl BookLevels {
    pub fn of(rows: &[BookRow]) -> Self {
        let mut by_price: BTreeMap<Decimal, Level> = BTreeMap::new();
        for o in rows {
            let l = by_price.entry(o.price.normalize()).or_insert(Level {
                price: o.price.normalize(),
                buy_quantity: 0,
                sell_quantity: 0,
                own_buy_quantity: 0,
                own_sell_quantity: 0,
            });
            match o.direction {
                Direction::Buy => l.buy_quantity += o.shown,
                Direction::Sell => l.sell_quantity += o.shown,
            }
        }
        let levels: Vec<Level> = by_price.into_values().rev().collect();
        let mut shares: HashMap<CompanyId, Vec<(usize, i64, i64)>> = HashMap::new();
        for o in rows {
            let price = o.price.normalize();
            let i = levels.partition_point(|l| l.price > price);
            let (buy, sell) = match o.direction {
                Direction::Buy => (o.shown, 0),
                Direction::Sell => (0, o.shown),
            };
            shares.entry(o.company_id).or_default().push((i, buy, sell));
        }
        Self { levels, shares }
    }

    /// The levels as `own` sees them (its share marked); `None` for the shared topic.
    pub fn seen_by(&self, own: Option<CompanyId>) -> Vec<Level> {
        let mut levels = self.levels.clone();
        for &(i, buy, sell) in own.and_then(|c| self.shares.get(&c)).into_iter().flatten() {
            levels[i].own_buy_quantity += buy;
            levels[i].own_sell_quantity += sell;
        }
        levels
    }

    /// Each company's share of the book, per price (best first): what `seen_by` marks as
    /// its own, so a company's sessions can be told their share without the others'.
    pub fn shares(&self) -> HashMap<CompanyId, Vec<(Decimal, i64, i64)>> {
        self.shares
            .iter()
            .map(|(company, parts)| {
                let mut by_level: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
                for &(i, buy, sell) in parts {
                    let e = by_level.entry(i).or_default();
                    e.0 += buy;
                    e.1 += sell;
                }
                let levels = by_level.into_iter().map(|(i, (b, s))| (self.levels[i].price, b, s)).collect();
                (*company, levels)
            })
            .collect()
    }
}
