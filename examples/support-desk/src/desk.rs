//! The MCP surface of the desk: tools, the ticket resource and the triage
//! prompt, each an ordinary method whose doc comment is what the model reads.

use std::sync::{Arc, OnceLock};

use typed_mcp::Json;
use typed_mcp::capability::Access;
use typed_mcp::wire::PromptMessage;
use typed_mcp::{
    Capability, ResourceUpdates, Server, ServerBuilder, ToolContext, prompt, prompts, resource,
    resources, tool, tools,
};

use crate::model::{Comment, DeskError, Exported, Reindexed, SearchResults, Ticket, TicketId};
use crate::store::Store;

/// Changing a ticket's state: closing it. Granted with `--allow desk.write`
/// (every ticket), or narrowed to some: `--allow desk.write=ticket:T-1003`,
/// `desk.write=ticket:T-10*`.
///
/// Opening a ticket and commenting on one only add to the desk (nothing is
/// changed or hidden), so they need no grant; closing takes a ticket out of the
/// queue and cannot be undone with these tools, so it does.
pub(crate) const DESK_WRITE: Capability =
    Capability::new("desk.write", "Change tickets in the support desk").resources();

/// Reading attachments from, and exporting tickets to, one directory the
/// operator grants: `--allow desk.files=/srv/desk` (read-write) or
/// `desk.files=ro:/srv/desk` (attachments only). Nothing outside it is
/// reachable through the tools, whatever path the model sends.
pub(crate) const DESK_FILES: Capability = Capability::new(
    "desk.files",
    "Read attachments from and export tickets to a directory the operator grants",
)
.paths(Access::ReadWrite);

/// The largest attachment read (a comment holds it whole).
const MAX_ATTACHMENT_BYTES: u64 = 16 * 1024;

/// The support desk: the ticket store, and where to announce changed tickets.
pub(crate) struct Desk {
    store: Store,
    /// Set once the server is built (the server owns the update channel).
    updates: OnceLock<ResourceUpdates>,
}

impl Desk {
    pub(crate) fn new(store: Store) -> Desk {
        Desk {
            store,
            updates: OnceLock::new(),
        }
    }

    /// The server's declarations: the desk's tools, resource and prompt.
    pub(crate) fn server(self: &Arc<Desk>) -> ServerBuilder {
        let desk = self;
        Server::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
            .title("Support desk")
            .instructions(
                "A customer support desk. Find tickets with search_tickets, read one with \
                 ticket://<id>, file new ones with open_ticket, add findings with add_comment, \
                 and close resolved ones with close_ticket (requires the desk.write capability).",
            )
            .tools(tools![
                desk.search_tickets,
                desk.open_ticket,
                desk.add_comment,
                desk.close_ticket,
                desk.attach_file,
                desk.export_ticket,
                desk.rebuild_search_index,
            ])
            .resources(resources![desk.ticket])
            .prompts(prompts![desk.triage])
    }

    /// Announces changed tickets on `updates` from now on.
    pub(crate) fn publish_to(&self, updates: ResourceUpdates) {
        let _ = self.updates.set(updates);
    }

    fn changed(&self, id: TicketId) {
        if let Some(updates) = self.updates.get() {
            updates.publish(id.uri());
        }
    }

    /// Search the support desk's tickets, open and closed, by words in their title and body.
    ///
    /// A ticket matches when it contains any of the words (or a word with the same stem:
    /// `refunded` finds `refund`); tickets matching more and rarer words come first. Read a
    /// hit's `ticket://<id>` resource for its full text and comments.
    ///
    /// # Arguments
    /// * `query` - Words to look for, e.g. `refund invoice`; case and punctuation are ignored.
    /// * `limit` - The most tickets to return, from 1 to 100.
    #[tool(title = "Search tickets", read_only, open_world = false)]
    async fn search_tickets(
        &self,
        #[schemars(length(min = 1, max = 500))] query: String,
        #[arg(default = 20)]
        #[schemars(range(min = 1, max = 100))]
        limit: u32,
    ) -> Result<SearchResults, DeskError> {
        let tickets = self.store.search(&query, limit).await?;
        Ok(SearchResults { tickets })
    }

    /// File a new support ticket; it starts open.
    ///
    /// # Arguments
    /// * `title` - A one-line summary of the problem (at most 200 characters).
    /// * `body` - The full description: what happened, what was expected, any order or invoice numbers.
    #[tool(title = "Open a ticket", destructive = false, open_world = false)]
    async fn open_ticket(
        &self,
        #[schemars(length(min = 1, max = 200))] title: String,
        #[schemars(length(max = 20000))] body: String,
    ) -> Result<Ticket, DeskError> {
        let title = title.trim().to_owned();
        if title.is_empty() {
            return Err(DeskError::InvalidInput("the title is blank".into()));
        }
        if title.contains(['\n', '\r']) {
            return Err(DeskError::InvalidInput(
                "the title must be one line; put details in the body".into(),
            ));
        }
        self.store.open_ticket(title, body).await
    }

    /// Close an open ticket with a resolution note. Closing cannot be undone with these tools.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket to close, e.g. `T-1001`.
    /// * `note` - How the problem was resolved; shown to whoever reads the ticket later.
    #[tool(title = "Close a ticket", destructive, idempotent = false, open_world = false, caps = [DESK_WRITE])]
    async fn close_ticket(
        &self,
        ctx: &ToolContext,
        ticket_id: TicketId,
        #[schemars(length(min = 1, max = 20000))] note: String,
    ) -> Result<Ticket, DeskError> {
        // The grant may name only some tickets.
        ctx.authorize_resource(&DESK_WRITE, &format!("ticket:{ticket_id}"))?;
        if note.trim().is_empty() {
            return Err(DeskError::InvalidInput(
                "the resolution note is blank".into(),
            ));
        }
        let ticket = self.store.close_ticket(ticket_id, note).await?;
        self.changed(ticket_id);
        Ok(ticket)
    }

    /// Attach a text file from the desk's file directory to a ticket, as a comment holding its contents.
    ///
    /// Only files under the directory the operator granted can be read; paths are relative to it.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket to attach the file to, e.g. `T-1001`.
    /// * `path` - The file, relative to the desk's file directory, e.g. `logs/vpn.txt` (UTF-8 text, at most 16 KiB).
    #[tool(title = "Attach a file", destructive = false, open_world = false, caps = [DESK_FILES])]
    async fn attach_file(
        &self,
        ctx: &ToolContext,
        ticket_id: TicketId,
        #[schemars(length(min = 1, max = 1024))] path: String,
    ) -> Result<Comment, DeskError> {
        let files = ctx.fs(&DESK_FILES)?;
        // File I/O blocks: off the runtime's threads (stdio runs on one).
        let bytes = blocking_io({
            let path = path.clone();
            move || files.read(&path, MAX_ATTACHMENT_BYTES)
        })
        .await??;
        let text = String::from_utf8(bytes)
            .map_err(|_| DeskError::InvalidInput(format!("{path:?} is not UTF-8 text")))?;
        let comment = self
            .store
            .add_comment(ticket_id, format!("Attached {path}:\n{text}"))
            .await?;
        self.changed(ticket_id);
        Ok(comment)
    }

    /// Export a ticket, with its comments, as a JSON file in the desk's file directory.
    ///
    /// Needs write access to the directory the operator granted; an existing file is replaced.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket to export, e.g. `T-1001`.
    /// * `path` - Where to write it, relative to the desk's file directory, e.g. `exports/T-1001.json`; its directory must exist.
    #[tool(title = "Export a ticket", destructive, idempotent, open_world = false, caps = [DESK_FILES])]
    async fn export_ticket(
        &self,
        ctx: &ToolContext,
        ticket_id: TicketId,
        #[schemars(length(min = 1, max = 1024))] path: String,
    ) -> Result<Exported, DeskError> {
        let files = ctx.fs(&DESK_FILES)?;
        let ticket = self.store.ticket(ticket_id).await?;
        let json = serde_json::to_vec_pretty(&ticket)
            .map_err(|e| DeskError::Unavailable(format!("the ticket cannot be encoded: {e}")))?;
        let bytes = json.len() as u64;
        blocking_io({
            let path = path.clone();
            move || files.write(&path, &json)
        })
        .await??;
        Ok(Exported { path, bytes })
    }

    /// Rebuild the full-text search index of every ticket, in batches, then merge it.
    ///
    /// Maintenance after a bulk import or a suspected index fault: searches keep working
    /// meanwhile. On a large desk this takes a while, so a client that supports the tasks
    /// extension gets a task to poll instead of waiting; the result reports how many tickets
    /// were reindexed.
    ///
    /// # Arguments
    /// * `batch_size` - Tickets rebuilt per transaction, from 1 to 1000.
    /// * `pause_ms` - Pause between batches in milliseconds (0 to 10000), leaving the database to other writers.
    #[tool(
        title = "Rebuild the search index",
        destructive = false,
        idempotent,
        open_world = false,
        task
    )]
    async fn rebuild_search_index(
        &self,
        ctx: ToolContext,
        #[arg(default = 100)]
        #[schemars(range(min = 1, max = 1000))]
        batch_size: u32,
        #[arg(default = 0)]
        #[schemars(range(max = 10000))]
        pause_ms: u32,
    ) -> Result<Reindexed, DeskError> {
        let ids = self.store.ticket_ids().await?;
        let total = ids.len() as f64;
        let (mut tickets, mut batches) = (0, 0);
        for (n, batch) in ids.chunks(batch_size.max(1) as usize).enumerate() {
            if n > 0 && pause_ms > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(pause_ms.into())).await;
            }
            tickets += self.store.reindex(batch.to_vec()).await?;
            batches += 1;
            ctx.progress(tickets as f64, Some(total), Some("reindexing tickets"))
                .await;
        }
        self.store.optimize_index().await?;
        Ok(Reindexed { tickets, batches })
    }

    /// Add a comment to a ticket, open or closed: a finding, a reply to the customer, a next step.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket to comment on, e.g. `T-1001`.
    /// * `body` - The comment's text.
    #[tool(title = "Comment on a ticket", destructive = false, open_world = false)]
    async fn add_comment(
        &self,
        ticket_id: TicketId,
        #[schemars(length(min = 1, max = 20000))] body: String,
    ) -> Result<Comment, DeskError> {
        if body.trim().is_empty() {
            return Err(DeskError::InvalidInput("the comment is blank".into()));
        }
        let comment = self.store.add_comment(ticket_id, body).await?;
        self.changed(ticket_id);
        Ok(comment)
    }

    /// A support ticket with its status, resolution and comments, as JSON.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket's id, e.g. `T-1001`.
    #[resource(
        uri = "ticket://{ticket_id}",
        name = "ticket",
        title = "Ticket",
        mime_type = "application/json"
    )]
    async fn ticket(&self, ticket_id: String) -> Result<Option<Json<Ticket>>, DeskError> {
        // An id that cannot exist reads like one that does not: resource not found.
        let Ok(id) = ticket_id.parse::<TicketId>() else {
            return Ok(None);
        };
        match self.store.ticket(id).await {
            Ok(ticket) => Ok(Some(Json(ticket))),
            Err(DeskError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Triage a ticket: ask for its category, priority and the next step, given its full text.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket to triage, e.g. `T-1001`.
    #[prompt(title = "Triage a ticket")]
    async fn triage(&self, ticket_id: String) -> Result<Vec<PromptMessage>, DeskError> {
        let ticket = self.store.ticket(ticket_id.parse()?).await?;
        Ok(vec![PromptMessage::user_text(triage_text(&ticket))])
    }
}

/// Runs filesystem work on tokio's blocking pool.
async fn blocking_io<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, DeskError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| DeskError::Unavailable(format!("the file operation stopped: {e}")))
}

fn triage_text(ticket: &Ticket) -> String {
    let mut text = format!(
        "You are triaging a customer support ticket. Answer with:\n\
         1. Category: billing, account access, bug, feature request or other.\n\
         2. Priority: urgent, high, normal or low, with one sentence of reasoning.\n\
         3. The next step for the support team, and a short reply to the customer.\n\n\
         Ticket {id} ({status:?}, filed {created}): {title}\n\n{body}\n",
        id = ticket.id,
        status = ticket.status,
        created = ticket.created_at,
        title = ticket.title,
        body = ticket.body,
    );
    if let Some(resolution) = &ticket.resolution {
        text.push_str(&format!("\nResolution: {resolution}\n"));
    }
    if !ticket.comments.is_empty() {
        text.push_str("\nComments, oldest first:\n");
        for comment in &ticket.comments {
            text.push_str(&format!("- {}: {}\n", comment.created_at, comment.body));
        }
    }
    text
}
