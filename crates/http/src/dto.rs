//! What the bodies of several routes share: exact decimals and whole numbers as the
//! API reads and documents them, pages, sorting. Each route's own bodies live beside it
//! in `routes/`, in the spec's `snake_case` field names.

use serde::{Deserialize, Serialize};
use upstairs_domain::quantity::Quantity;
use utoipa::ToSchema;

// ----- shared helpers ------------------------------------------------------------

/// Distinguishes a field that is absent (no change) from one sent as null (clear it).
pub fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Exact decimals travel as JSON numbers (`94.73`), parsed without floating point.
pub fn decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Number)
        .description(Some("exact decimal"))
        .build()
}

/// Whole numbers in requests. JSON Schema counts `-132.0` and `1e2` as integers, so the
/// server accepts every whole number however it is written, and refuses fractions and
/// numbers outside the 64-bit range (ADR 0013).
pub mod whole {
    use rust_decimal::Decimal;
    use rust_decimal::prelude::ToPrimitive;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};

    fn parse(s: &str) -> Option<i64> {
        s.parse::<i64>().ok().or_else(|| {
            let d = Decimal::from_str_exact(s).or_else(|_| Decimal::from_scientific(s)).ok()?;
            if d.fract().is_zero() { d.to_i64() } else { None }
        })
    }

    fn checked<E: Error>(s: &str) -> Result<i64, E> {
        parse(s).ok_or_else(|| E::custom(format!("invalid value: {s}, expected a whole number")))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        checked(&serde_json::Number::deserialize(d)?.to_string())
    }

    pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Option::<serde_json::Number>::deserialize(d)?.map(|n| checked(&n.to_string())).transpose()
    }

    /// Absent (no change) apart from null (clear it), as [`super::double_option`].
    pub fn double_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i64>>, D::Error> {
        option(d).map(Some)
    }

    /// A query parameter: text that must be a whole number.
    pub fn query<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Option::<String>::deserialize(d)?.map(|s| checked(s.trim())).transpose()
    }
}

/// A quantity a request states (ADR 0027): a bounded [`Quantity`], else 400 naming `field`.
pub fn quantity(field: &str, n: i64) -> Result<Quantity, crate::error::ApiError> {
    Quantity::new(n).map_err(|e| upstairs_engine::EngineError::invalid(field, &e.to_string()).into())
}

/// [`quantity`] of an optional field.
pub fn quantity_option(field: &str, n: Option<i64>) -> Result<Option<Quantity>, crate::error::ApiError> {
    n.map(|n| quantity(field, n)).transpose()
}

/// Exact decimals in requests (prices, tick sizes), at most [`decimal::LIMIT`] in size. A
/// number with more digits than a decimal holds (28 places) cannot be any instrument's
/// price; it is read as a double (17 significant digits) and then meets the tick-size
/// rules like any other number, instead of being refused as malformed (ADR 0013).
pub mod decimal {
    use rust_decimal::Decimal;
    use rust_decimal::prelude::FromPrimitive;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};

    /// The largest magnitude accepted (and documented as `minimum`/`maximum`).
    pub const LIMIT: f64 = 1e15;

    fn parse(s: &str) -> Option<Decimal> {
        let exact = Decimal::from_str_exact(s).or_else(|_| Decimal::from_scientific(s)).ok();
        let d = match exact {
            Some(d) => d,
            None => {
                let f = s.parse::<f64>().ok()?;
                if f.abs() < 1e-28 { Decimal::ZERO } else { Decimal::from_f64(f)? }
            }
        };
        (d.abs() <= Decimal::from_f64(LIMIT)?).then_some(d)
    }

    fn checked<E: Error>(n: serde_json::Number) -> Result<Decimal, E> {
        parse(&n.to_string()).ok_or_else(|| E::custom(format!("invalid value: {n}, expected a number up to 1e15")))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        checked(serde_json::Number::deserialize(d)?)
    }

    pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
        Option::<serde_json::Number>::deserialize(d)?.map(checked).transpose()
    }

    /// Absent (no change) apart from null (clear it), as [`super::double_option`].
    pub fn double_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Decimal>>, D::Error> {
        option(d).map(Some)
    }
}

/// A decimal that may be null.
pub fn nullable_decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::schema::Type::Number,
            utoipa::openapi::schema::Type::Null,
        ]))
        .description(Some("exact decimal"))
        .build()
}

/// A decimal a request sends, with the bounds the server accepts.
pub fn request_decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Number)
        .description(Some("exact decimal"))
        .minimum(Some(-decimal::LIMIT))
        .maximum(Some(decimal::LIMIT))
        .build()
}

/// A decimal a request sends, or null to clear it.
pub fn nullable_request_decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::schema::Type::Number,
            utoipa::openapi::schema::Type::Null,
        ]))
        .description(Some("exact decimal"))
        .minimum(Some(-decimal::LIMIT))
        .maximum(Some(decimal::LIMIT))
        .build()
}

// ----- companies -----------------------------------------------------------------

/// One page of a list, and how many items the whole list has.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T: ToSchema> {
    pub items: Vec<T>,
    pub total_items: i64,
}

impl<T: ToSchema, U: Into<T>> From<upstairs_engine::model::Page<U>> for Page<T> {
    fn from(p: upstairs_engine::model::Page<U>) -> Self {
        Self { items: p.items.into_iter().map(Into::into).collect(), total_items: p.total_items }
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// From 0.
    #[serde(default, deserialize_with = "whole::query")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "whole::query")]
    pub size: Option<i64>,
}

// ----- users (admin) -------------------------------------------------------------

// ----- instruments ---------------------------------------------------------------

/// Sort direction.
#[derive(Clone, Copy, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum SortOrder {
    Asc,
    Desc,
}

// ----- orders --------------------------------------------------------------------

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(deserialize_with = "whole::deserialize")]
        n: i64,
        #[serde(default, deserialize_with = "decimal::option")]
        price: Option<rust_decimal::Decimal>,
    }

    fn body(json: &str) -> Result<Body, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn integers_are_whole_numbers_however_written() {
        assert_eq!(body(r#"{"n": -132.0}"#).unwrap().n, -132);
        assert_eq!(body(r#"{"n": 1e2}"#).unwrap().n, 100);
        assert_eq!(body(r#"{"n": 7}"#).unwrap().n, 7);
        assert!(body(r#"{"n": 1.5}"#).is_err());
        assert!(body(r#"{"n": 1e30}"#).is_err());
        assert!(body(r#"{"n": "7"}"#).is_err());
    }

    #[test]
    fn decimals_are_exact_and_bounded() {
        let p = |json: &str| body(&format!(r#"{{"n": 1, "price": {json}}}"#)).map(|b| b.price.unwrap());
        assert_eq!(p("94.73").unwrap().to_string(), "94.73");
        assert_eq!(p("1e-216").unwrap(), rust_decimal::Decimal::ZERO);
        assert!(p("1e16").is_err());
        assert!(p("\"94.73\"").is_err());
    }

    #[test]
    fn query_integers_accept_whole_numbers() {
        let q: PageQuery = serde_urlencoded_like("page=-132.0&size=5");
        assert_eq!((q.page, q.size), (Some(-132), Some(5)));
    }

    fn serde_urlencoded_like(q: &str) -> PageQuery {
        let uri: axum::http::Uri = format!("/x?{q}").parse().unwrap();
        axum::extract::Query::<PageQuery>::try_from_uri(&uri).unwrap().0
    }
}
