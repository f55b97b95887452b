export interface Entity {
  id: string;
}

export interface QueryOptions<T> {
  where?: Partial<T>;
  limit?: number;
  offset?: number;
  orderBy?: keyof T;
  direction?: "asc" | "desc";
}

/**
 * Storage-agnostic repository with the common CRUD operations implemented in
 * terms of a few abstract primitives that each backend provides.
 */
export abstract class BaseRepository<T extends Entity> {
  protected abstract readonly tableName: string;

  protected abstract fetchById(id: string): Promise<T | undefined>;
  protected abstract fetchMany(options: QueryOptions<T>): Promise<T[]>;
  protected abstract write(entity: T): Promise<void>;
  protected abstract remove(id: string): Promise<boolean>;

  async findById(id: string): Promise<T | undefined> {
    return this.fetchById(id);
  }

  async getById(id: string): Promise<T> {
    const entity = await this.fetchById(id);
    if (!entity) throw new Error(`${this.tableName}: no row with id ${id}`);
    return entity;
  }

  findMany(options: QueryOptions<T> = {}): Promise<T[]> {
    return this.fetchMany({ limit: 100, ...options });
  }

  async findOne(where: Partial<T>): Promise<T | undefined> {
    const [first] = await this.fetchMany({ where, limit: 1 });
    return first;
  }

  async save(entity: T): Promise<T> {
    await this.write(entity);
    return entity;
  }

  /**
   * Applies a partial change to a stored entity and writes it back; the id
   * can not be changed.
   */
  async update(id: string, changes: Partial<Omit<T, "id">>): Promise<T> {
    const current = await this.getById(id);
    const next = { ...current, ...changes, id } as T;
    await this.write(next);
    return next;
  }

  delete(id: string): Promise<boolean> {
    return this.remove(id);
  }
}

/** In-memory backend, used by tests and local development. */
export class InMemoryRepository<T extends Entity> extends BaseRepository<T> {
  protected readonly rows = new Map<string, T>();

  constructor(protected readonly tableName: string) {
    super();
  }

  protected async fetchById(id: string): Promise<T | undefined> {
    const row = this.rows.get(id);
    return row ? { ...row } : undefined;
  }

  protected async fetchMany({ where, limit, offset = 0, orderBy, direction = "asc" }: QueryOptions<T>): Promise<T[]> {
    let rows = [...this.rows.values()];
    if (where) {
      const entries = Object.entries(where) as [keyof T, unknown][];
      rows = rows.filter((row) => entries.every(([k, v]) => row[k] === v));
    }
    if (orderBy) {
      const sign = direction === "asc" ? 1 : -1;
      rows.sort((a, b) => (a[orderBy] < b[orderBy] ? -sign : a[orderBy] > b[orderBy] ? sign : 0));
    }
    return rows.slice(offset, limit === undefined ? undefined : offset + limit).map((r) => ({ ...r }));
  }

  protected async write(entity: T): Promise<void> {
    this.rows.set(entity.id, { ...entity });
  }

  protected async remove(id: string): Promise<boolean> {
    return this.rows.delete(id);
  }
}
