//! The start page: sign in, who is signed in, and the task catalogue for staff.
//! Signing in is a reactive form that calls the `login` server function.

use super::alerts;
use crate::api::auth::{whoami, Login, Logout};
use crate::api::tasks::list_tasks;
use crate::pages::error_line;
use leptos::prelude::*;
use leptos_router::components::A;

#[component]
pub fn Home() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let logout = ServerAction::<Logout>::new();
    // Outside the form, which is drawn again after each attempt: a failed sign-in keeps the
    // name that was typed.
    let name = RwSignal::new(String::new());
    let user = Resource::new(
        move || (login.version().get(), logout.version().get()),
        |_| whoami(),
    );
    view! {
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    user.await
                        .map(|user| match user {
                            Some(u) => {
                                view! {
                                    <h1>"CLUES lab"</h1>
                                    <section class="whoami">
                                        <p>
                                            "Signed in as "
                                            <strong class="user-name">{u.name.clone()}</strong> " ("
                                            <span class="user-role">{u.role.as_str()}</span> ")"
                                        </p>
                                        <button on:click=move |_| {
                                            logout.dispatch(crate::api::auth::Logout {});
                                        }>"Sign out"</button>
                                        {u
                                            .role
                                            .is_staff()
                                            .then(|| {
                                                view! {
                                                    <p>
                                                        <A href="/studies">"Studies"</A>
                                                        " · "
                                                        <A href="/dashboard">"Researcher dashboard"</A>
                                                        " · "
                                                        <A href="/crossfit">"CrossFit tasks"</A>
                                                        " · "
                                                        <A href="/machines">"Machines"</A>
                                                    </p>
                                                }
                                            })}
                                    </section>
                                    <TaskList />
                                }
                                    .into_any()
                            }
                            None => view! { <LoginForm login name /> }.into_any(),
                        })
                })}
            </ErrorBoundary>
        </Suspense>
    }
}

/// The sign-in form, the `login` action's own fields (`ActionForm`): before hydration the
/// browser posts to the server function itself, never a GET that would put the password in
/// the URL.
#[component]
fn LoginForm(login: ServerAction<Login>, name: RwSignal<String>) -> impl IntoView {
    view! {
        <section class="login">
            <h1>"Sign in"</h1>
            <p>
                "Researchers and admins sign in here. Crowd workers arrive through their study link."
            </p>
            <ActionForm action=login>
                <label>"Name" <input name="name" autocomplete="username" bind:value=name /></label>
                <label>
                    "Password"
                    <input name="password" type="password" autocomplete="current-password" />
                </label>
                <button type="submit" disabled=move || login.pending().get()>
                    "Sign in"
                </button>
            </ActionForm>
            {move || login.value().get().and_then(|r| r.err()).map(error_line)}
        </section>
    }
}

#[component]
fn TaskList() -> impl IntoView {
    let tasks = Resource::new(|| (), |_| list_tasks());
    view! {
        <section class="tasks">
            <h2>"Tasks"</h2>
            <Suspense fallback=|| view! { <p>"Loading tasks…"</p> }>
                <ErrorBoundary fallback=alerts>
                    {move || Suspend::new(async move {
                        tasks
                            .await
                            .map(|list| match list {
                                list if list.is_empty() => {
                                    view! {
                                        <p>
                                            "No tasks yet. Import CLUES with "
                                            <code>"clues-lab import clues <dir>"</code> "."
                                        </p>
                                    }
                                        .into_any()
                                }
                                list => {
                                    view! {
                                        <table class="grid">
                                            <thead>
                                                <tr>
                                                    <th>"Task"</th>
                                                    <th>"Family"</th>
                                                    <th>"Source"</th>
                                                    <th>"Test items"</th>
                                                    <th>"Train files"</th>
                                                    <th>"Quality notes"</th>
                                                </tr>
                                            </thead>
                                            <tbody>
                                                {list
                                                    .into_iter()
                                                    .map(|t| {
                                                        view! {
                                                            <tr>
                                                                <td>
                                                                    <A href=format!("/tasks/{}", t.name)>{t.name.clone()}</A>
                                                                </td>
                                                                <td>{t.family.label()}</td>
                                                                <td>{t.source.clone()}</td>
                                                                <td class="num">{t.test_items}</td>
                                                                <td class="num">{t.train_files}</td>
                                                                <td class="num">{t.quality_issues}</td>
                                                            </tr>
                                                        }
                                                    })
                                                    .collect_view()}
                                            </tbody>
                                        </table>
                                    }
                                        .into_any()
                                }
                            })
                    })}
                </ErrorBoundary>
            </Suspense>
        </section>
    }
}
