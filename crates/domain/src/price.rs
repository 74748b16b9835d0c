//! Exact prices and the tick arithmetic of the band and the ladder. Never `f64`.

use rust_decimal::Decimal;

/// True when `price` is a whole number of `tick`s (exact decimal arithmetic).
pub fn on_tick(price: Decimal, tick: Decimal) -> bool {
    tick > Decimal::ZERO && (price % tick).is_zero()
}

/// `price` moved by `n` ticks.
pub fn add_ticks(price: Decimal, tick: Decimal, n: i64) -> Decimal {
    price + tick * Decimal::from(n)
}

/// How many ticks from `low` to `high` (both on the tick).
pub fn ticks_between(low: Decimal, high: Decimal, tick: Decimal) -> Option<i64> {
    if tick <= Decimal::ZERO {
        return None;
    }
    let n = (high - low) / tick;
    n.is_integer().then(|| n.try_into().ok()).flatten()
}

/// The electronic band: best bid and best offer on the exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    pub min_tick_price: Decimal,
    pub max_tick_price: Decimal,
}

/// Why a band is not acceptable, with the admin form's texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BandError {
    /// Field and message.
    Field(&'static str, &'static str),
}

impl Band {
    /// Both prices on the tick, best offer above best bid.
    pub fn parse(min_tick_price: Decimal, max_tick_price: Decimal, tick: Decimal) -> Result<Band, Vec<BandError>> {
        let mut errors = Vec::new();
        if !on_tick(min_tick_price, tick) {
            errors.push(BandError::Field("min_tick_price", "Invalid value"));
        }
        if !on_tick(max_tick_price, tick) {
            errors.push(BandError::Field("max_tick_price", "Invalid value"));
        }
        if errors.is_empty() && max_tick_price <= min_tick_price {
            errors.push(BandError::Field("max_tick_price", "Best offer must be above best bid"));
        }
        if errors.is_empty() { Ok(Band { min_tick_price, max_tick_price }) } else { Err(errors) }
    }

    pub fn contains(&self, price: Decimal) -> bool {
        self.min_tick_price <= price && price <= self.max_tick_price
    }
}

/// A price with its instrument's tick decimals (`-0.030` on a 0.005 tick), as the web app
/// writes it; as it is when the tick is not known or the price is finer than the tick.
pub fn priced(price: Decimal, tick: Option<Decimal>) -> String {
    match tick.map(|t| t.normalize().scale()) {
        Some(places) if price.normalize().scale() <= places => {
            let mut p = price.normalize();
            p.rescale(places);
            p.to_string()
        }
        _ => price.normalize().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn tick_checks_are_exact() {
        let cases = [
            ("94.73", "0.01", true),
            ("94.735", "0.01", false),
            ("0.3", "0.1", true), // 0.1 + 0.2 style pitfalls do not exist here
            ("99.995", "0.005", true),
            ("99.996", "0.005", false),
            ("-0.25", "0.25", true),
            ("1", "0", false),
        ];
        for (p, t, ok) in cases {
            assert_eq!(on_tick(d(p), d(t)), ok, "{p} on {t}");
        }
        assert_eq!(add_ticks(d("94.73"), d("0.01"), 10), d("94.83"));
        assert_eq!(add_ticks(d("94.73"), d("0.01"), -2), d("94.71"));
        assert_eq!(ticks_between(d("94.25"), d("94.75"), d("0.005")), Some(100));
        assert_eq!(ticks_between(d("94.25"), d("94.751"), d("0.005")), None);
    }

    #[test]
    fn band_rules() {
        assert!(Band::parse(d("94.70"), d("94.80"), d("0.01")).is_ok());
        assert_eq!(
            Band::parse(d("94.705"), d("94.80"), d("0.01")),
            Err(vec![BandError::Field("min_tick_price", "Invalid value")])
        );
        assert_eq!(
            Band::parse(d("94.80"), d("94.80"), d("0.01")),
            Err(vec![BandError::Field("max_tick_price", "Best offer must be above best bid")])
        );
        let b = Band::parse(d("94.70"), d("94.80"), d("0.01")).unwrap();
        assert!(b.contains(d("94.70")) && b.contains(d("94.80")) && !b.contains(d("94.81")));
    }

    #[test]
    fn prices_are_written_to_the_tick() {
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        assert_eq!(priced(d("-0.03"), Some(d("0.005"))), "-0.030");
        assert_eq!(priced(d("5512"), Some(d("1"))), "5512");
        assert_eq!(priced(d("94.7"), Some(d("0.010"))), "94.70");
        assert_eq!(priced(d("0"), Some(d("0.005"))), "0.000");
        // Finer than the tick (a tick changed since): as it is, never rounded away.
        assert_eq!(priced(d("0.0025"), Some(d("0.005"))), "0.0025");
        assert_eq!(priced(d("71.250"), None), "71.25");
    }
}
