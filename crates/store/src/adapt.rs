//! Column adapters: the only place where the two backends store a value differently.
//! Times are integer microseconds on SQLite and `TIMESTAMPTZ` on PostgreSQL; decimals
//! are normalised text on SQLite and `NUMERIC` on PostgreSQL. Everything else (ids,
//! integers, booleans, text, JSON through `sqlx::types::Json`) binds the same on both,
//! so the SQL and the row types above these adapters are written once.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueRef};
use sqlx::sqlite::{SqliteArgumentsBuffer, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Postgres, Sqlite, Type};
use std::str::FromStr;

/// A UTC instant as a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ts(pub DateTime<Utc>);

/// An exact decimal as a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dec(pub Decimal);

impl Ts {
    /// As SQLite stores it: integer microseconds.
    pub fn sqlite(self) -> i64 {
        self.0.timestamp_micros()
    }
}

impl Dec {
    /// As SQLite stores it: normalised text.
    pub fn sqlite(self) -> String {
        self.0.to_string()
    }
}

impl From<Ts> for DateTime<Utc> {
    fn from(t: Ts) -> Self {
        t.0
    }
}

impl From<Dec> for Decimal {
    fn from(d: Dec) -> Self {
        d.0
    }
}

impl Type<Sqlite> for Ts {
    fn type_info() -> SqliteTypeInfo {
        <i64 as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <i64 as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for Ts {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<Sqlite>>::encode(self.sqlite(), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for Ts {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        let micros = <i64 as Decode<Sqlite>>::decode(value)?;
        DateTime::from_timestamp_micros(micros).map(Ts).ok_or_else(|| format!("stored time {micros}").into())
    }
}

impl Type<Postgres> for Ts {
    fn type_info() -> PgTypeInfo {
        <DateTime<Utc> as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <DateTime<Utc> as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for Ts {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <DateTime<Utc> as Encode<Postgres>>::encode_by_ref(&self.0, buf)
    }
}

impl<'r> Decode<'r, Postgres> for Ts {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        <DateTime<Utc> as Decode<Postgres>>::decode(value).map(Ts)
    }
}

impl Type<Sqlite> for Dec {
    fn type_info() -> SqliteTypeInfo {
        <String as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <String as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for Dec {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <String as Encode<Sqlite>>::encode(self.sqlite(), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for Dec {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        let text = <String as Decode<Sqlite>>::decode(value)?;
        Decimal::from_str(&text).map(Dec).map_err(|e| format!("stored decimal {text}: {e}").into())
    }
}

impl Type<Postgres> for Dec {
    fn type_info() -> PgTypeInfo {
        <Decimal as Type<Postgres>>::type_info()
    }
    fn compatible(ty: &PgTypeInfo) -> bool {
        <Decimal as Type<Postgres>>::compatible(ty)
    }
}

impl Encode<'_, Postgres> for Dec {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <Decimal as Encode<Postgres>>::encode_by_ref(&self.0, buf)
    }
}

impl<'r> Decode<'r, Postgres> for Dec {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        <Decimal as Decode<Postgres>>::decode(value).map(Dec)
    }
}
