//! The HTML document around every page, rendered on the server only: the stylesheet and the
//! bundle that hydrates the page (staff or worker), by their content-hashed names.

use super::assets;
use crate::pages::App;
use leptos::either::Either;
use leptos::prelude::*;

/// The HTML document around every page (rendered on the server only): the stylesheet and
/// the browser bundle by their content-hashed names, the worker's own bundle on study pages.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let (options, css) = assets::for_page(options);
    let after_paint = assets::after_paint_bundle(&options);
    let nonce = leptos::nonce::use_nonce();
    // The dashboard's loader when it has one; Leptos' otherwise (deferred on the dashboard).
    let scripts = match after_paint {
        Some((js, wasm)) => Either::Left(view! {
            <script type="module" nonce=nonce>
                {assets::after_paint_script(&js, &wasm)}
            </script>
        }),
        None => {
            let defer = assets::is_dashboard();
            Either::Right(view! { <HydrationScripts options=options.clone() defer /> })
        }
    };
    assets::restrict_scripts();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                // Every page has the site's name as its title (set here, so the browser's
                // bundles carry no code for titles).
                <title>"CLUES lab"</title>
                <link rel="icon" href="data:," />
                <link rel="stylesheet" id="leptos" href=css />
                <AutoReload options=options.clone() />
                {scripts}
                // With scripts off the answer form never loads: say so instead of "Loading".
                <noscript>
                    <style>".loading { display: none } .no-script { display: block }"</style>
                </noscript>
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}
