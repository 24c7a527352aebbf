//! Roles, legacy users, and permissions: CREATE/ALTER/DROP ROLE and USER, LIST ROLES and
//! USERS, GRANT, REVOKE and LIST permissions.

use super::Parser;
use crate::ast::{
    AlterRole, AlterUser, CreateRole, CreateUser, DropRole, DropUser, ListPermissions, ListRoles,
    Permission, PermissionChange, Resource, RoleOptions, Statement,
};
use crate::error::Result;
use crate::lexer::TokenKind as T;

const PERMISSIONS: &[(&str, Permission)] = &[
    ("create", Permission::Create),
    ("alter", Permission::Alter),
    ("drop", Permission::Drop),
    ("select", Permission::Select),
    ("modify", Permission::Modify),
    ("authorize", Permission::Authorize),
    ("describe", Permission::Describe),
    ("execute", Permission::Execute),
    ("unmask", Permission::Unmask),
    ("select_masked", Permission::SelectMasked),
];

impl Parser<'_> {
    /// A role or user name: an identifier (lowercased unless quoted) or a string (kept).
    fn role_name(&mut self) -> Result<String> {
        if let T::Str(s) = &self.tok().kind {
            let s = s.clone();
            self.advance();
            return Ok(s);
        }
        self.ident()
    }

    fn string(&mut self) -> Result<String> {
        match &self.tok().kind {
            T::Str(s) => {
                let s = s.clone();
                self.advance();
                Ok(s)
            }
            _ => Err(self.mismatched("STRING_LITERAL")),
        }
    }

    fn boolean(&mut self) -> Result<bool> {
        if self.eat_kw("true") {
            Ok(true)
        } else if self.eat_kw("false") {
            Ok(false)
        } else {
            Err(self.mismatched("BOOLEAN"))
        }
    }

    /// `opt = v AND opt = v ...` after `WITH`.
    fn role_options(&mut self) -> Result<RoleOptions> {
        let mut o = RoleOptions::default();
        loop {
            let tok = self.pos;
            let dup = |p: &Self, set: bool| {
                if set {
                    Err(p.error_at(
                        tok,
                        format!(
                            "Multiple definition for property {}",
                            p.text_of(p.peek_tok(0)).to_ascii_lowercase()
                        ),
                    ))
                } else {
                    Ok(())
                }
            };
            if self.is_kw("password") {
                dup(self, o.password.is_some())?;
                self.advance();
                self.expect(&T::Eq)?;
                o.password = Some(self.string()?);
            } else if self.is_kw("hashed") {
                dup(self, o.hashed_password.is_some())?;
                self.advance();
                self.expect_kw("password")?;
                self.expect(&T::Eq)?;
                o.hashed_password = Some(self.string()?);
            } else if self.is_kw("login") {
                dup(self, o.login.is_some())?;
                self.advance();
                self.expect(&T::Eq)?;
                o.login = Some(self.boolean()?);
            } else if self.is_kw("superuser") {
                dup(self, o.superuser.is_some())?;
                self.advance();
                self.expect(&T::Eq)?;
                o.superuser = Some(self.boolean()?);
            } else if self.is_kw("options") {
                dup(self, o.options.is_some())?;
                self.advance();
                self.expect(&T::Eq)?;
                o.options = Some(self.property_map()?);
            } else {
                return Err(self.no_viable());
            }
            if !self.eat_kw("and") {
                return Ok(o);
            }
        }
    }

    pub(crate) fn create_role(&mut self) -> Result<Statement> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.role_name()?;
        let options = if self.eat_kw("with") {
            self.role_options()?
        } else {
            RoleOptions::default()
        };
        Ok(Statement::CreateRole(CreateRole {
            name,
            if_not_exists,
            options,
        }))
    }

    pub(crate) fn alter_role(&mut self) -> Result<Statement> {
        let if_exists = self.if_exists()?;
        let name = self.role_name()?;
        let options = if self.eat_kw("with") {
            self.role_options()?
        } else {
            RoleOptions::default()
        };
        Ok(Statement::AlterRole(AlterRole {
            name,
            if_exists,
            options,
        }))
    }

    pub(crate) fn drop_role(&mut self) -> Result<Statement> {
        let if_exists = self.if_exists()?;
        let name = self.role_name()?;
        Ok(Statement::DropRole(DropRole { name, if_exists }))
    }

    /// `[WITH [HASHED] PASSWORD 'p'] [SUPERUSER | NOSUPERUSER]` of the legacy user
    /// statements.
    fn user_options(&mut self) -> Result<(Option<String>, Option<bool>)> {
        let mut password = None;
        if self.eat_kw("with") {
            self.eat_kw("hashed");
            self.expect_kw("password")?;
            password = Some(self.string()?);
        }
        let superuser = if self.eat_kw("superuser") {
            Some(true)
        } else if self.eat_kw("nosuperuser") {
            Some(false)
        } else {
            None
        };
        Ok((password, superuser))
    }

    pub(crate) fn create_user(&mut self) -> Result<Statement> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.role_name()?;
        let (password, superuser) = self.user_options()?;
        Ok(Statement::CreateUser(CreateUser {
            name,
            if_not_exists,
            password,
            superuser,
        }))
    }

    pub(crate) fn alter_user(&mut self) -> Result<Statement> {
        let if_exists = self.if_exists()?;
        let name = self.role_name()?;
        let (password, superuser) = self.user_options()?;
        Ok(Statement::AlterUser(AlterUser {
            name,
            if_exists,
            password,
            superuser,
        }))
    }

    pub(crate) fn drop_user(&mut self) -> Result<Statement> {
        let if_exists = self.if_exists()?;
        let name = self.role_name()?;
        Ok(Statement::DropUser(DropUser { name, if_exists }))
    }

    /// Whether a permission (or `ALL`) starts here, as opposed to a role name: it is
    /// followed by `ON`, `PERMISSION(S)` or, for LIST, `OF`/`NORECURSIVE`/the end.
    fn is_permission_start(&self) -> bool {
        let word_ok = self.is_kw("all") || PERMISSIONS.iter().any(|(k, _)| self.is_kw(k));
        word_ok
            && (self.is_kw_at(1, "on")
                || self.is_kw_at(1, "permission")
                || self.is_kw_at(1, "permissions")
                || self.is_kw_at(1, "of")
                || self.is_kw_at(1, "norecursive")
                || matches!(self.peek_tok(1).kind, T::Eof | T::Semicolon))
    }

    /// `ALL [PERMISSIONS]` (None) or `perm [PERMISSION]`.
    fn permission_or_all(&mut self) -> Result<Option<Permission>> {
        if self.eat_kw("all") {
            self.eat_kw("permissions");
            return Ok(None);
        }
        for (kw, p) in PERMISSIONS {
            if self.eat_kw(kw) {
                self.eat_kw("permission");
                return Ok(Some(*p));
            }
        }
        Err(self.no_viable())
    }

    fn resource(&mut self) -> Result<Resource> {
        if self.is_kw("all") {
            let r = if self.is_kw_at(1, "keyspaces") {
                Resource::AllKeyspaces
            } else if self.is_kw_at(1, "roles") {
                Resource::AllRoles
            } else if self.is_kw_at(1, "mbeans") {
                Resource::AllMBeans
            } else if self.is_kw_at(1, "functions") {
                self.advance();
                self.advance();
                let ks = if self.eat_kw("in") {
                    self.expect_kw("keyspace")?;
                    Some(self.ident()?)
                } else {
                    None
                };
                return Ok(Resource::AllFunctions(ks));
            } else {
                return Err(self.no_viable());
            };
            self.advance();
            self.advance();
            return Ok(r);
        }
        if self.eat_kw("keyspace") {
            return Ok(Resource::Keyspace(self.ident()?));
        }
        if self.eat_kw("role") {
            return Ok(Resource::Role(self.role_name()?));
        }
        if self.is_kw("mbean") || self.is_kw("mbeans") {
            self.advance();
            return Ok(Resource::MBean(self.string()?));
        }
        if self.is_kw("function") && self.is_ident_at(1) {
            self.advance();
            let name = self.qualified_name()?;
            self.expect(&T::LParen)?;
            let types = self.comma_list(&T::RParen, Self::type_name)?;
            return Ok(Resource::Function(name, types));
        }
        self.eat_kw("table");
        Ok(Resource::Table(self.qualified_name()?))
    }

    pub(crate) fn grant(&mut self) -> Result<Statement> {
        self.expect_kw("grant")?;
        if self.is_permission_start() {
            let permission = self.permission_or_all()?;
            self.expect_kw("on")?;
            let resource = self.resource()?;
            self.expect_kw("to")?;
            let role = self.role_name()?;
            return Ok(Statement::Grant(PermissionChange {
                permission,
                resource,
                role,
            }));
        }
        let role = self.role_name()?;
        self.expect_kw("to")?;
        let grantee = self.role_name()?;
        Ok(Statement::GrantRole { role, grantee })
    }

    pub(crate) fn revoke(&mut self) -> Result<Statement> {
        self.expect_kw("revoke")?;
        if self.is_permission_start() {
            let permission = self.permission_or_all()?;
            self.expect_kw("on")?;
            let resource = self.resource()?;
            self.expect_kw("from")?;
            let role = self.role_name()?;
            return Ok(Statement::Revoke(PermissionChange {
                permission,
                resource,
                role,
            }));
        }
        let role = self.role_name()?;
        self.expect_kw("from")?;
        let revokee = self.role_name()?;
        Ok(Statement::RevokeRole { role, revokee })
    }

    pub(crate) fn list(&mut self) -> Result<Statement> {
        self.expect_kw("list")?;
        if self.eat_kw("roles") {
            let of = if self.eat_kw("of") {
                Some(self.role_name()?)
            } else {
                None
            };
            let recursive = !self.eat_kw("norecursive");
            return Ok(Statement::ListRoles(ListRoles { of, recursive }));
        }
        if self.eat_kw("users") {
            return Ok(Statement::ListUsers);
        }
        if !self.is_permission_start() {
            return Err(self.no_viable());
        }
        let permission = self.permission_or_all()?;
        let resource = if self.eat_kw("on") {
            Some(self.resource()?)
        } else {
            None
        };
        let of = if self.eat_kw("of") {
            Some(self.role_name()?)
        } else {
            None
        };
        let recursive = !self.eat_kw("norecursive");
        Ok(Statement::ListPermissions(ListPermissions {
            permission,
            resource,
            of,
            recursive,
        }))
    }
}
