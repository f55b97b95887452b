using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Inventory.Models;
using Inventory.Services;

namespace Inventory.Data
{
    /// <summary>
    /// Keeps stock items in memory, for tests and local development.
    /// </summary>
    public class InMemoryStockRepository : IStockRepository
    {
        private readonly ConcurrentDictionary<string, StockItem> _items = new();

        /// <summary>
        /// Adds items before the first request, replacing any with the same SKU.
        /// </summary>
        public InMemoryStockRepository Seed(params StockItem[] items)
        {
            foreach (var item in items)
            {
                _items[item.Sku] = item;
            }
            return this;
        }

        public Task<StockItem?> FindAsync(string sku, CancellationToken cancellationToken = default)
        {
            _items.TryGetValue(sku, out var item);
            return Task.FromResult(item);
        }

        /// <summary>
        /// Lists every stored item, ordered by SKU so that reports are stable.
        /// </summary>
        public Task<IReadOnlyList<StockItem>> ListAsync(CancellationToken cancellationToken = default)
        {
            IReadOnlyList<StockItem> items = _items.Values.OrderBy(i => i.Sku).ToList();
            return Task.FromResult(items);
        }

        public Task SaveAsync(StockItem item, CancellationToken cancellationToken = default)
        {
            _items[item.Sku] = item;
            return Task.CompletedTask;
        }
    }
}
