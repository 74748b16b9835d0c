//! Roles as the spec names them, and the permissions they grant (DESIGN section 4).

use serde::{Deserialize, Serialize};

/// A role a user holds; a user may hold several.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Role {
    Trader,
    UpstairsAdmin,
    CompanyAdmin,
    UpstairsSales,
    Sandbox,
}

impl Role {
    pub const ALL: [Role; 5] =
        [Role::Trader, Role::UpstairsAdmin, Role::CompanyAdmin, Role::UpstairsSales, Role::Sandbox];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Trader => "trader",
            Role::UpstairsAdmin => "upstairs-admin",
            Role::CompanyAdmin => "company-admin",
            Role::UpstairsSales => "upstairs-sales",
            Role::Sandbox => "sandbox",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// A role of the venue's own staff: only a venue admin grants it, or changes a user
    /// who holds it.
    pub fn is_venue_role(self) -> bool {
        matches!(self, Role::UpstairsAdmin | Role::UpstairsSales)
    }

    /// A role that trades (`trader`, `sandbox`): no user holds one beside a venue role.
    pub fn is_trading_role(self) -> bool {
        matches!(self, Role::Trader | Role::Sandbox)
    }

    /// What holding this role allows.
    pub fn grants(self, permission: Permission) -> bool {
        use Permission::*;
        match self {
            // Everything but trading (the venue's staff see every firm's orders, so they
            // never trade) and the sandbox restriction (a limit, not a right).
            Role::UpstairsAdmin => !matches!(permission, Trade | SandboxOnly),
            Role::UpstairsSales => matches!(permission, OrderAdmin | BillingRead | AdminDrawer | Newsletters),
            Role::CompanyAdmin => matches!(permission, ManageOwnCompanyUsers | StopOwnCompany | Newsletters),
            Role::Trader => matches!(permission, Trade),
            Role::Sandbox => matches!(permission, Trade | SandboxOnly),
        }
    }
}

/// What a caller may do; checked in the engine for every call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    /// Everything under the admin area: companies, users of any company, instruments.
    Admin,
    /// The Orders panel (read) and the admin drawer.
    OrderAdmin,
    BillingRead,
    /// The venue staff's drawer: every company's users, the venue's newsletters.
    AdminDrawer,
    /// The Orders newsletter (admin spec section 6: everyone with the drawer): every
    /// newsletter with `AdminDrawer`, else one's own company's, to its own users.
    Newsletters,
    /// Create and manage the users of one's own company.
    ManageOwnCompanyUsers,
    /// Stop one's own company's trading (the kill switch; only a venue admin releases it).
    StopOwnCompany,
    Trade,
    /// Restricts trading and instrument visibility to sandbox instruments.
    SandboxOnly,
}

/// True when any of `roles` grants `permission`. A venue role withholds trading even
/// beside a trading role (a user stored before the two were kept apart).
pub fn has_permission(roles: &[Role], permission: Permission) -> bool {
    if permission == Permission::Trade && roles.iter().any(|r| r.is_venue_role()) {
        return false;
    }
    roles.iter().any(|r| r.grants(permission))
}

/// What is wrong with holding `roles` together, if anything: a venue role beside a
/// trading role would let the venue's staff, who see every firm's orders, trade.
pub fn roles_problem(roles: &[Role]) -> Option<&'static str> {
    let venue = roles.iter().any(|r| r.is_venue_role());
    let trading = roles.iter().any(|r| r.is_trading_role());
    (venue && trading)
        .then_some("A venue role (upstairs-admin, upstairs-sales) cannot be held with a trading role (trader, sandbox)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_round_trip() {
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
        assert_eq!(Role::parse("admin"), None);
    }

    #[test]
    fn permission_table() {
        use Permission::*;
        let cases: &[(Role, Permission, bool)] = &[
            (Role::UpstairsAdmin, Admin, true),
            (Role::UpstairsAdmin, OrderAdmin, true),
            (Role::UpstairsAdmin, SandboxOnly, false),
            (Role::UpstairsAdmin, Trade, false),
            (Role::UpstairsAdmin, StopOwnCompany, true),
            (Role::UpstairsSales, Trade, false),
            (Role::CompanyAdmin, Trade, false),
            (Role::UpstairsSales, Admin, false),
            (Role::UpstairsSales, OrderAdmin, true),
            (Role::UpstairsSales, AdminDrawer, true),
            (Role::CompanyAdmin, Admin, false),
            (Role::CompanyAdmin, ManageOwnCompanyUsers, true),
            (Role::CompanyAdmin, StopOwnCompany, true),
            (Role::CompanyAdmin, Newsletters, true),
            (Role::CompanyAdmin, AdminDrawer, false),
            (Role::UpstairsSales, Newsletters, true),
            (Role::Trader, Newsletters, false),
            (Role::Sandbox, Newsletters, false),
            (Role::Trader, StopOwnCompany, false),
            (Role::UpstairsSales, StopOwnCompany, false),
            (Role::Trader, Admin, false),
            (Role::Trader, Trade, true),
            (Role::Trader, SandboxOnly, false),
            (Role::Sandbox, SandboxOnly, true),
            (Role::Sandbox, Trade, true),
        ];
        for &(role, perm, expected) in cases {
            assert_eq!(role.grants(perm), expected, "{role:?} {perm:?}");
        }
    }

    #[test]
    fn trading_comes_from_trading_roles_alone() {
        for r in Role::ALL {
            assert_eq!(r.grants(Permission::Trade), r.is_trading_role(), "{r:?}");
            assert!(!(r.is_venue_role() && r.is_trading_role()), "{r:?}");
        }
    }

    #[test]
    fn a_venue_role_is_never_held_with_a_trading_role() {
        use Role::*;
        let refused: &[&[Role]] =
            &[&[UpstairsAdmin, Trader], &[UpstairsSales, Sandbox], &[Trader, CompanyAdmin, UpstairsSales]];
        for roles in refused {
            assert!(roles_problem(roles).is_some(), "{roles:?}");
        }
        let allowed: &[&[Role]] = &[
            &[UpstairsAdmin],
            &[UpstairsAdmin, UpstairsSales, CompanyAdmin],
            &[Trader, CompanyAdmin],
            &[Sandbox, Trader],
            &[],
        ];
        for roles in allowed {
            assert_eq!(roles_problem(roles), None, "{roles:?}");
        }
        // A user stored with both before they were kept apart still cannot trade.
        assert!(!has_permission(&[UpstairsAdmin, Trader], Permission::Trade));
        assert!(!has_permission(&[UpstairsSales, Sandbox], Permission::Trade));
        assert!(has_permission(&[CompanyAdmin, Trader], Permission::Trade));
    }
}
