//! `tools![...]`, `resources![...]` and `prompts![...]`: a list of decorated
//! functions and bound methods becomes a `Vec` of declarations, in order.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Member, Token};

use crate::ctxt::Ctxt;
use crate::func::{Kind, decl_ident};

/// Expands a list macro for declarations of `kind`.
pub(crate) fn expand(kind: Kind, input: TokenStream) -> TokenStream {
    let entries = match Punctuated::<Expr, Token![,]>::parse_terminated.parse2(input) {
        Ok(entries) => entries,
        Err(e) => return e.to_compile_error(),
    };
    let cx = Ctxt::new();
    let mut values = Vec::new();
    for entry in entries {
        match entry {
            // `add`, `crate::math::mul`: the function's hidden constructor.
            Expr::Path(path) if path.qself.is_none() => {
                let mut path = path.path;
                let last = path.segments.last_mut().expect("a path has a segment");
                if !last.arguments.is_none() {
                    cx.error_spanned_by(
                        &last.arguments,
                        format!(
                            "{} functions are never generic; remove the generic arguments",
                            kind.attribute()
                        ),
                    );
                    continue;
                }
                last.ident = decl_ident(&last.ident);
                values.push(quote!(#path()));
            }
            // `desk.close_ticket`, `state.desk.close_ticket`: a method bound to
            // a value held in an `Arc` or cloned into one.
            Expr::Field(field) => {
                let Member::Named(method) = &field.member else {
                    cx.error_spanned_by(
                        &field.member,
                        "name a method here, as in `desk.close_ticket`",
                    );
                    continue;
                };
                let base = &field.base;
                let decl = decl_ident(method);
                values.push(quote!({
                    #[allow(unused_imports)]
                    use ::typed_mcp::__private::{BindArc as _, BindClone as _, BindRefClone as _};
                    (&&::typed_mcp::__private::Binder(&#base)).bind().#decl()
                }));
            }
            // A declaration value built some other way.
            expr @ (Expr::Call(_) | Expr::MethodCall(_) | Expr::Macro(_) | Expr::Block(_)) => {
                values.push(quote!(#expr));
            }
            other => cx.error_spanned_by(
                &other,
                format!(
                    "expected a {} function (`add`, `crate::math::mul`), a method bound to a value (`desk.close_ticket`), or an expression that makes a declaration (`make_{}()`)",
                    kind.attribute(),
                    kind.noun()
                ),
            ),
        }
    }
    // The errors go in a block, as statements, beside the entries that were
    // read: the list stays an expression of the right type.
    let errors = cx.check().err();
    quote!({
        #errors
        ::std::vec![#(#values),*]
    })
}
