//! Where a scenario's two databases live: two SQLite files, two fresh schemas on the server that
//! `RETRYKEY_PG_URL` names, or two schemas on a private server the scenario may restart.

use retrykey_converter::ConverterDb;
use retrykey_durable::pg::URL_VAR;
use retrykey_outbox::{DocumentsOptions, OutboxStore, backend};
use retrykey_program::flags::Database;
use retrykey_testkit::FreshSchema;
use retrykey_testkit::ScratchFile;

use super::postgres::PrivateServer;

/// The two databases of one scenario: the document service's and the consumer's.
pub struct Place {
    /// `sqlite` or `postgres`, for the table.
    pub backend: &'static str,
    documents: Db,
    consumer: Db,
    /// Declared after the databases, so that their schemas are dropped before it stops.
    server: Option<PrivateServer>,
}

/// One database, with the guard that removes it when the place is dropped.
enum Db {
    Sqlite(ScratchFile),
    Postgres { url: String, schema: FreshSchema },
}

impl Db {
    fn postgres(url: &str) -> Self {
        Db::Postgres {
            url: url.to_owned(),
            schema: FreshSchema::new(url),
        }
    }

    /// The program flags that open it.
    fn args(&self) -> Vec<String> {
        match self {
            Db::Sqlite(file) => vec!["--db".into(), format!("sqlite:{}", file.path().display())],
            Db::Postgres { schema, .. } => vec![
                "--db".into(),
                "postgres".into(),
                "--pg-schema".into(),
                schema.name().to_owned(),
            ],
        }
    }

    fn database(&self) -> Database {
        match self {
            Db::Sqlite(file) => Database::Sqlite(file.path().to_owned()),
            Db::Postgres { url, .. } => Database::Postgres(url.clone()),
        }
    }
}

impl Place {
    /// Two fresh SQLite files in the temporary folder.
    pub fn sqlite() -> Self {
        Self {
            backend: "sqlite",
            documents: Db::Sqlite(ScratchFile::new("fault-documents")),
            consumer: Db::Sqlite(ScratchFile::new("fault-consumer")),
            server: None,
        }
    }

    /// Two fresh schemas on the server at `url`.
    pub fn postgres(url: &str) -> Self {
        Self {
            backend: "postgres",
            documents: Db::postgres(url),
            consumer: Db::postgres(url),
            server: None,
        }
    }

    /// Two schemas on a PostgreSQL server of this scenario's own, which it may restart.
    pub fn private_postgres() -> Result<Self, String> {
        let server = PrivateServer::start()?;
        let url = server.url();
        Ok(Self {
            backend: "postgres",
            documents: Db::postgres(&url),
            consumer: Db::postgres(&url),
            server: Some(server),
        })
    }

    /// The private server, if this place has one.
    pub fn server(&self) -> Option<&PrivateServer> {
        self.server.as_ref()
    }

    /// The flags that open the document service's database (`documents`, `dispatcher`).
    pub fn documents_args(&self) -> Vec<String> {
        self.documents.args()
    }

    /// The flags that open the consumer's database (`converter`).
    pub fn consumer_args(&self) -> Vec<String> {
        self.consumer.args()
    }

    /// The environment the programs need: the URL behind `--db postgres`.
    pub fn env(&self) -> Vec<(String, String)> {
        match &self.documents {
            Db::Postgres { url, .. } => vec![(URL_VAR.to_owned(), url.clone())],
            Db::Sqlite(_) => Vec::new(),
        }
    }

    /// The document service's database, opened in this process (the accepting side).
    pub fn open_documents(&self) -> Box<dyn OutboxStore> {
        self.open_documents_with(DocumentsOptions::default())
    }

    /// [`Place::open_documents`] with `options` (a scope, a pool size); the schema is the
    /// place's own.
    pub fn open_documents_with(&self, mut options: DocumentsOptions) -> Box<dyn OutboxStore> {
        if let Db::Postgres { schema, .. } = &self.documents {
            options.pg_schema = schema.name().to_owned();
        }
        backend::open(&self.documents.database(), options)
            .expect("the document service's database opens")
    }

    /// The consumer's database, opened in this process to read what it converted.
    pub fn open_consumer(&self) -> ConverterDb {
        match &self.consumer {
            Db::Sqlite(file) => ConverterDb::open_sqlite(file.path()),
            Db::Postgres { url, schema } => ConverterDb::connect_postgres(url, schema.name()),
        }
        .expect("the consumer's database opens")
    }
}
