//! Routes registered together with their OpenAPI operation: a feature adds a handler
//! by naming its `#[utoipa::path]`, which gives the path, the methods and the
//! documentation at once, so no `/api` route can exist undocumented.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, on};
use upstairs_engine::Store;
use utoipa::openapi::path::{HttpMethod, Operation, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{ContentBuilder, OpenApi, Paths, Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::AppState;
use crate::error::{PROBLEM_JSON, Problem, ProblemFieldError};

/// The documented routes of one feature (or, merged, of the whole API).
pub struct ApiRouter<S: Store> {
    router: Router<AppState<S>>,
    paths: Paths,
    schemas: Vec<(String, RefOr<Schema>)>,
}

impl<S: Store> Default for ApiRouter<S> {
    fn default() -> Self {
        Self { router: Router::new(), paths: Paths::new(), schemas: Vec::new() }
    }
}

impl<S: Store> ApiRouter<S> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `handler` at the path and methods its `#[utoipa::path]` `P` declares, and
    /// documents it, adding the statuses the HTTP edge itself can answer (see [`edge_responses`]).
    pub fn route<P, H, T>(mut self, handler: H) -> Self
    where
        P: utoipa::Path + utoipa::__dev::SchemaReferences,
        H: Handler<T, AppState<S>>,
        T: 'static,
    {
        let path = P::path();
        // Documented paths are absolute; the router is nested under `/api`.
        let local = path.strip_prefix("/api").unwrap_or(&path);
        let methods = P::methods();
        let filter = methods.iter().map(method_filter).reduce(MethodFilter::or).unwrap_or(MethodFilter::GET);
        self.router = self.router.route(local, on(filter, handler));
        let mut operation = P::operation();
        edge_responses(&mut operation);
        self.paths.add_path_operation(&path, methods, operation);
        P::schemas(&mut self.schemas);
        self
    }

    /// Adds another feature's routes and their documentation.
    pub fn merge(mut self, other: ApiRouter<S>) -> Self {
        self.router = self.router.merge(other.router);
        self.paths.merge(other.paths);
        self.schemas.extend(other.schemas);
        self
    }

    /// The axum router and the document `base` completed with these routes' paths and schemas.
    pub fn split(self, mut base: OpenApi) -> (Router<AppState<S>>, OpenApi) {
        base.paths.merge(self.paths);
        let components = base.components.get_or_insert_with(Default::default);
        for (name, schema) in self.schemas {
            components.schemas.entry(name).or_insert(schema);
        }
        components.schemas.entry(Problem::name().into_owned()).or_insert_with(Problem::schema);
        components.schemas.entry(ProblemFieldError::name().into_owned()).or_insert_with(ProblemFieldError::schema);
        (self.router, base)
    }
}

fn method_filter(m: &HttpMethod) -> MethodFilter {
    match m {
        HttpMethod::Get => MethodFilter::GET,
        HttpMethod::Put => MethodFilter::PUT,
        HttpMethod::Post => MethodFilter::POST,
        HttpMethod::Delete => MethodFilter::DELETE,
        HttpMethod::Options => MethodFilter::OPTIONS,
        HttpMethod::Head => MethodFilter::HEAD,
        HttpMethod::Patch => MethodFilter::PATCH,
        HttpMethod::Trace => MethodFilter::TRACE,
    }
}

/// The statuses the edge answers before a handler runs, by the operation's shape (ADR 0006):
/// a JSON body can be malformed (400), of the wrong shape (422), too large (413) or not JSON
/// (415); a path or query parameter can be malformed (400); a bearer session can be missing
/// or over (401). Every error response is then documented as `application/problem+json`.
pub fn edge_responses(op: &mut Operation) {
    let mut add = |status: u16| {
        op.responses.responses.entry(status.to_string()).or_insert_with(|| problem_response(status));
    };
    if op.request_body.is_some() {
        for status in [400, 408, 413, 415, 422] {
            add(status);
        }
    }
    let has_params =
        op.parameters.iter().flatten().any(|p| matches!(p.parameter_in, ParameterIn::Path | ParameterIn::Query));
    if has_params {
        add(400);
    }
    if op.security.as_ref().is_some_and(|s| !s.is_empty()) {
        add(401);
    }
    // Any call: more than the node takes at once (429), the database gone or the request
    // over its time (503).
    add(429);
    add(503);
    for (status, response) in op.responses.responses.iter_mut() {
        let is_error = status.parse::<u16>().is_ok_and(|s| s >= 400);
        if let (true, RefOr::T(r)) = (is_error, response) {
            r.content.clear();
            r.content.insert(PROBLEM_JSON.into(), problem_content());
            if r.description.is_empty() {
                r.description = describe(status);
            }
        }
    }
}

fn problem_content() -> utoipa::openapi::Content {
    ContentBuilder::new().schema(Some(Ref::from_schema_name(Problem::name()))).build()
}

fn problem_response(status: u16) -> RefOr<utoipa::openapi::Response> {
    RefOr::T(ResponseBuilder::new().description(describe(&status.to_string())).build())
}

fn describe(status: &str) -> String {
    match status {
        "400" => "The request or a field of it is not valid",
        "401" => "No valid session: sign in",
        "403" => "The caller may not do this",
        "404" => "No such resource (or not visible to the caller)",
        "408" => "The body did not arrive within 10 s",
        "409" => "Conflicts with the current state",
        "410" => "The link is no longer valid",
        "413" => "The body is larger than 64 KiB",
        "415" => "The body is not sent as JSON",
        "422" => "The body does not have the documented shape",
        "429" => "Too many requests, of this caller or at once: try again after Retry-After",
        "503" => "The venue is busy: try again",
        _ => "Error",
    }
    .to_owned()
}
