//! Where a scenario's two databases live: two SQLite files, two fresh schemas on the server that
//! `RETRYKEY_PG_URL` names, or two schemas on a private server the scenario may restart.

use std::sync::atomic::{AtomicUsize, Ordering};

use retrykey_converter::ConverterDb;
use retrykey_durable::sqlite::ScratchFile;
use retrykey_outbox::{Documents, DocumentsOptions, documents};
use retrykey_replicas::flags::Database;

use super::postgres::PrivateServer;

/// The two databases of one scenario: the document service's and the consumer's.
pub struct Place {
    /// `sqlite` or `postgres`, for the table.
    pub backend: &'static str,
    documents: Database,
    consumer: Database,
    schemas: Option<(String, String)>,
    /// Deleted when the place is dropped.
    _files: Vec<ScratchFile>,
    server: Option<PrivateServer>,
}

impl Place {
    /// Two fresh SQLite files in the temporary folder.
    pub fn sqlite() -> Self {
        let documents = ScratchFile::new("fault-documents");
        let consumer = ScratchFile::new("fault-consumer");
        Self {
            backend: "sqlite",
            documents: Database::Sqlite(documents.path().to_owned()),
            consumer: Database::Sqlite(consumer.path().to_owned()),
            schemas: None,
            _files: vec![documents, consumer],
            server: None,
        }
    }

    /// Two fresh schemas on the server at `url`.
    pub fn postgres(url: &str) -> Self {
        let schemas = fresh_schemas();
        drop_schemas(url, &schemas);
        Self {
            backend: "postgres",
            documents: Database::Postgres(url.to_owned()),
            consumer: Database::Postgres(url.to_owned()),
            schemas: Some(schemas),
            _files: Vec::new(),
            server: None,
        }
    }

    /// Two schemas on a PostgreSQL server of this scenario's own, which it may restart.
    pub fn private_postgres() -> Result<Self, String> {
        let server = PrivateServer::start()?;
        let url = server.url();
        Ok(Self {
            backend: "postgres",
            documents: Database::Postgres(url.clone()),
            consumer: Database::Postgres(url),
            schemas: Some(fresh_schemas()),
            _files: Vec::new(),
            server: Some(server),
        })
    }

    /// The private server, if this place has one.
    pub fn server(&self) -> Option<&PrivateServer> {
        self.server.as_ref()
    }

    /// The flags that open the document service's database (`documents`, `dispatcher`).
    pub fn documents_args(&self) -> Vec<String> {
        args(&self.documents, self.schemas.as_ref().map(|s| s.0.as_str()))
    }

    /// The flags that open the consumer's database (`converter`).
    pub fn consumer_args(&self) -> Vec<String> {
        args(&self.consumer, self.schemas.as_ref().map(|s| s.1.as_str()))
    }

    /// The environment the programs need: the URL behind `--db postgres`.
    pub fn env(&self) -> Vec<(String, String)> {
        match &self.documents {
            Database::Postgres(url) => vec![("RETRYKEY_PG_URL".to_owned(), url.clone())],
            Database::Sqlite(_) => Vec::new(),
        }
    }

    /// The document service's database, opened in this process (the accepting side).
    pub fn open_documents(&self) -> Box<dyn Documents> {
        let options = DocumentsOptions {
            pg_schema: self
                .schemas
                .as_ref()
                .map_or(retrykey_outbox::DEFAULT_SCHEMA.to_owned(), |s| s.0.clone()),
            ..DocumentsOptions::default()
        };
        documents::open(&self.documents, options).expect("the document service's database opens")
    }

    /// The consumer's database, opened in this process to read what it converted.
    pub fn open_consumer(&self) -> ConverterDb {
        match (&self.consumer, &self.schemas) {
            (Database::Sqlite(path), _) => ConverterDb::open_sqlite(path),
            (Database::Postgres(url), Some((_, schema))) => {
                ConverterDb::connect_postgres(url, schema)
            }
            (Database::Postgres(url), None) => {
                ConverterDb::connect_postgres(url, retrykey_converter::pg::DEFAULT_SCHEMA)
            }
        }
        .expect("the consumer's database opens")
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if let (Database::Postgres(url), Some(schemas), None) =
            (&self.documents, &self.schemas, &self.server)
        {
            drop_schemas(url, schemas);
        }
    }
}

fn args(db: &Database, schema: Option<&str>) -> Vec<String> {
    match db {
        Database::Sqlite(path) => vec!["--db".to_owned(), format!("sqlite:{}", path.display())],
        Database::Postgres(_) => vec![
            "--db".to_owned(),
            "postgres".to_owned(),
            "--pg-schema".to_owned(),
            schema.unwrap_or_default().to_owned(),
        ],
    }
}

/// Schema names no other scenario of any process here uses.
fn fresh_schemas() -> (String, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let id = std::process::id();
    (
        format!("rk_fault_documents_{id}_{n}"),
        format!("rk_fault_consumer_{id}_{n}"),
    )
}

/// Drops the two schemas, if they are there (a plain thread: this may run in a runtime).
fn drop_schemas(url: &str, (documents, consumer): &(String, String)) {
    let (url, sql) = (
        url.to_owned(),
        format!(
            "DROP SCHEMA IF EXISTS {documents} CASCADE; DROP SCHEMA IF EXISTS {consumer} CASCADE"
        ),
    );
    let _ = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .ok()?;
            tokio::spawn(connection);
            client.batch_execute(&sql).await.ok()
        })
    })
    .join();
}
