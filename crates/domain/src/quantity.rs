//! Bounded quantities (ADR 0027): every quantity the venue takes in is a whole number of
//! lots from 0 to [`QUANTITY_CEILING`], every multiplier from 1 to [`MAX_MULTIPLIER`], and
//! every sum of them is checked. The databases refuse the same bounds, so no counter or
//! book level can leave 64 bits however many orders a firm sends.

use serde::Serialize;

/// The largest quantity anything may carry (10^12 lots): the databases refuse more. The
/// venue's own maximum per order ([`DEFAULT_MAX_ORDER_QUANTITY`], configurable) is below it.
pub const QUANTITY_CEILING: i64 = 1_000_000_000_000;

/// The venue's default largest order (parent order, child order, take, RFQ, quote).
pub const DEFAULT_MAX_ORDER_QUANTITY: i64 = 1_000_000_000;

/// The largest parent-order limit multiplier a user may be given: enough to reach the
/// venue's default maximum on an instrument whose block is one lot, no more.
pub const MAX_MULTIPLIER: i64 = 1_000_000_000;

/// A quantity as a request states it: `0..=QUANTITY_CEILING` lots. Zero is a quantity
/// (below every minimum block, which the use case says); a negative one is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Quantity(i64);

/// Why a number is not a quantity, with the text the field error carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error("Must not be negative")]
    Negative,
    #[error("Must be at most {QUANTITY_CEILING}")]
    TooLarge,
}

impl Quantity {
    pub const ZERO: Quantity = Quantity(0);
    pub const MAX: Quantity = Quantity(QUANTITY_CEILING);

    pub fn new(n: i64) -> Result<Quantity, QuantityError> {
        match n {
            ..0 => Err(QuantityError::Negative),
            0..=QUANTITY_CEILING => Ok(Quantity(n)),
            _ => Err(QuantityError::TooLarge),
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }

    /// The sum, when it is still a quantity.
    pub fn checked_add(self, other: Quantity) -> Option<Quantity> {
        Quantity::new(self.0.checked_add(other.0)?).ok()
    }

    /// The difference, when it is not negative.
    pub fn checked_sub(self, other: Quantity) -> Option<Quantity> {
        Quantity::new(self.0.checked_sub(other.0)?).ok()
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A user's parent-order limit: `1..=MAX_MULTIPLIER` times the instrument's minimum block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Multiplier(i64);

impl Multiplier {
    pub fn new(n: i64) -> Option<Multiplier> {
        (1..=MAX_MULTIPLIER).contains(&n).then_some(Multiplier(n))
    }

    pub fn get(self) -> i64 {
        self.0
    }

    /// The largest parent order this multiplier allows on an instrument whose minimum
    /// block is `min_block`, never above the venue's `max_order` (no product can wrap:
    /// both factors are bounded, and the multiplication is checked all the same).
    pub fn max_parent_quantity(self, min_block: i64, max_order: i64) -> i64 {
        self.0.checked_mul(min_block).map_or(max_order, |m| m.min(max_order))
    }
}

/// A resting order as a take may reach it: how much of it the take may have (`has`: its
/// quantity, or for a preview what the book shows of it) and the least one fill of it
/// may be (`least`, from [`least_fill`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reachable {
    pub has: i64,
    pub least: i64,
}

/// The least one fill of a resting order of `quantity` lots may be (ADR 0041): the
/// minimum block, or its minimum execution size when it has one, except that a
/// remainder below that size may be filled whole.
pub fn least_fill(min_block: i64, min_execution: Option<i64>, quantity: i64) -> i64 {
    min_block.max(min_execution.map_or(0, |m| m.min(quantity)))
}

/// How much of each resting order a take of `wanted` lots reaches, best first, against
/// `available`: nothing below the minimum block `min_block` nor below an order's own
/// least fill (its minimum execution size: an order the take is too small for is passed
/// by), no resting order left with less than a block, and the sum never above `wanted`.
/// Returns (index into `available`, quantity).
pub fn allocate(wanted: i64, min_block: i64, available: &[Reachable]) -> Vec<(usize, i64)> {
    let mut left = wanted;
    let mut hits = Vec::new();
    if min_block <= 0 {
        return hits;
    }
    for (i, r) in available.iter().enumerate() {
        if left < min_block {
            break;
        }
        let has = r.has;
        let mut quantity = left.min(has);
        let rest = has - quantity;
        if rest > 0 && rest < min_block {
            // A remainder below the minimum block could never be taken: leave the
            // resting order a whole block, or pass it by when that is too little.
            quantity = has - min_block;
        }
        if quantity < min_block.max(r.least) {
            continue;
        }
        left -= quantity;
        hits.push((i, quantity));
    }
    hits
}

/// A quantity with thousands separators, as the web app writes it: `1,500`.
pub fn grouped(quantity: i64) -> String {
    let digits = quantity.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if quantity < 0 {
        out.push('-');
    }
    for (n, d) in digits.chars().enumerate() {
        if n > 0 && (digits.len() - n).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edges() {
        assert_eq!(Quantity::new(0), Ok(Quantity::ZERO));
        assert_eq!(Quantity::new(1).map(Quantity::get), Ok(1));
        assert_eq!(Quantity::new(QUANTITY_CEILING), Ok(Quantity::MAX));
        assert_eq!(Quantity::new(QUANTITY_CEILING + 1), Err(QuantityError::TooLarge));
        assert_eq!(Quantity::new(i64::MAX), Err(QuantityError::TooLarge));
        assert_eq!(Quantity::new(-1), Err(QuantityError::Negative));
        assert_eq!(Quantity::new(i64::MIN), Err(QuantityError::Negative));
        assert_eq!(Quantity::MAX.checked_add(Quantity::new(1).unwrap()), None);
        assert_eq!(Quantity::ZERO.checked_sub(Quantity::new(1).unwrap()), None);
        assert_eq!(Multiplier::new(0), None);
        assert_eq!(Multiplier::new(MAX_MULTIPLIER + 1), None);
        assert_eq!(Multiplier::new(i64::MAX), None);
        let m = Multiplier::new(MAX_MULTIPLIER).unwrap();
        assert_eq!(m.max_parent_quantity(QUANTITY_CEILING, DEFAULT_MAX_ORDER_QUANTITY), DEFAULT_MAX_ORDER_QUANTITY);
        assert_eq!(Multiplier::new(3).unwrap().max_parent_quantity(100, DEFAULT_MAX_ORDER_QUANTITY), 300);
    }

    /// Orders with no minimum execution size: each may be filled down to a block.
    fn plain(has: &[i64]) -> Vec<Reachable> {
        has.iter().map(|&has| Reachable { has, least: 0 }).collect()
    }

    #[test]
    fn allocation_leaves_whole_blocks() {
        // 5,000 wanted against 4,950 and 2,000 with a block of 100: the first is taken
        // whole, and the 50 left is below a block.
        assert_eq!(allocate(5_000, 100, &plain(&[4_950, 2_000])), vec![(0, 4_950)]);
        // A remainder of 50 would be left: the hit leaves a whole block instead.
        assert_eq!(allocate(950, 100, &plain(&[1_000])), vec![(0, 900)]);
        assert_eq!(allocate(1_000, 100, &plain(&[100, 2_000])), vec![(0, 100), (1, 900)]);
        assert_eq!(allocate(99, 100, &plain(&[1_000])), vec![]);
        assert_eq!(allocate(100, 0, &plain(&[1_000])), vec![]);
    }

    #[test]
    fn least_fills() {
        // (block, minimum execution size, the order's quantity) → the least one fill.
        let table = [
            (100, None, 5_000, 100),
            (100, Some(1_000), 5_000, 1_000),
            // A remainder below the size may be filled, whole.
            (100, Some(1_000), 600, 600),
            (100, Some(1_000), 1_000, 1_000),
            // Never below the block, whatever was stored.
            (100, Some(50), 5_000, 100),
            (100, Some(i64::MAX), 5_000, 5_000),
        ];
        for (block, mes, quantity, least) in table {
            assert_eq!(least_fill(block, mes, quantity), least, "{block} {mes:?} {quantity}");
        }
    }

    #[test]
    fn allocation_passes_by_orders_the_take_is_too_small_for() {
        let r = |has, least| Reachable { has, least };
        // The oldest order asks for 1,000 at least: a take of 800 passes it by for the next.
        assert_eq!(allocate(800, 100, &[r(5_000, 1_000), r(2_000, 100)]), vec![(1, 800)]);
        // At its size it is filled, and the rest goes on to the next.
        assert_eq!(allocate(1_500, 100, &[r(5_000, 1_000), r(2_000, 100)]), vec![(0, 1_500)]);
        assert_eq!(allocate(6_000, 100, &[r(5_000, 1_000), r(2_000, 100)]), vec![(0, 5_000), (1, 1_000)]);
        // What is left of the take after the first is too small for the second.
        assert_eq!(allocate(2_500, 100, &[r(2_000, 100), r(3_000, 1_000)]), vec![(0, 2_000)]);
        // A remainder below the size is filled whole, never in part.
        assert_eq!(allocate(600, 100, &[r(600, 600)]), vec![(0, 600)]);
        assert_eq!(allocate(500, 100, &[r(600, 600)]), vec![]);
        // A preview reaches only an iceberg's shown block: one asking for more than that
        // is left out, without a word.
        assert_eq!(allocate(5_000, 100, &[r(100, 2_000)]), vec![]);
        // Leaving a whole block behind must not take the fill below the size.
        assert_eq!(allocate(1_950, 100, &[r(2_000, 1_950)]), vec![]);
    }

    fn any_quantity() -> impl Strategy<Value = i64> {
        prop_oneof![
            Just(0),
            Just(1),
            Just(QUANTITY_CEILING - 1),
            Just(QUANTITY_CEILING),
            Just(QUANTITY_CEILING + 1),
            Just(i64::MAX),
            Just(-1),
            Just(i64::MIN),
            any::<i64>(),
            0..=QUANTITY_CEILING,
        ]
    }

    proptest! {
        #[test]
        fn quantities_stay_in_bounds(a in any_quantity(), b in any_quantity()) {
            let (qa, qb) = (Quantity::new(a), Quantity::new(b));
            prop_assert_eq!(qa.is_ok(), (0..=QUANTITY_CEILING).contains(&a));
            if let (Ok(qa), Ok(qb)) = (qa, qb) {
                match qa.checked_add(qb) {
                    Some(s) => prop_assert_eq!(s.get(), a + b),
                    None => prop_assert!(a + b > QUANTITY_CEILING),
                }
                match qa.checked_sub(qb) {
                    Some(s) => prop_assert_eq!(s.get(), a - b),
                    None => prop_assert!(a < b),
                }
            }
        }

        #[test]
        fn parent_limits_never_wrap(m in any::<i64>(), block in any_quantity(), max in any_quantity()) {
            if let (Some(m), true, true) = (Multiplier::new(m), block > 0, max > 0) {
                let limit = m.max_parent_quantity(block, max);
                prop_assert!(limit <= max && limit > 0);
            }
        }

        #[test]
        fn allocation_never_overfills(
            wanted in any_quantity().prop_filter("a quantity", |q| Quantity::new(*q).is_ok()),
            block in 1..=QUANTITY_CEILING,
            resting in proptest::collection::vec((1..=QUANTITY_CEILING, proptest::option::of(1..=QUANTITY_CEILING)), 0..8),
        ) {
            let reachable: Vec<Reachable> =
                resting.iter().map(|&(has, mes)| Reachable { has, least: least_fill(block, mes, has) }).collect();
            let hits = allocate(wanted, block, &reachable);
            let total: i128 = hits.iter().map(|&(_, q)| i128::from(q)).sum();
            prop_assert!(total <= i128::from(wanted));
            for &(i, q) in &hits {
                let (has, mes) = resting[i];
                prop_assert!(q >= block && q <= has);
                // Never below the order's own size, but for a smaller remainder filled whole.
                prop_assert!(mes.is_none_or(|m| q >= m || q == has));
                let rest = has - q;
                prop_assert!(rest == 0 || rest >= block);
            }
        }
    }

    #[test]
    fn quantities_are_grouped_by_thousands() {
        assert_eq!(
            [0, 999, 1000, 12_345, 1_234_567, -1500, i64::MAX, i64::MIN].map(grouped),
            [
                "0",
                "999",
                "1,000",
                "12,345",
                "1,234,567",
                "-1,500",
                "9,223,372,036,854,775,807",
                "-9,223,372,036,854,775,808"
            ]
        );
    }
}
