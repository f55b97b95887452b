using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Inventory.Models;
using Microsoft.Extensions.Logging;

namespace Inventory.Services
{
    /// <summary>
    /// Receives and ships goods, and reorders items that run low.
    /// </summary>
    public sealed class StockService
    {
        private readonly IStockRepository _repository;
        private readonly ISupplierClient _suppliers;
        private readonly ILogger<StockService> _logger;
        private readonly TimeProvider _clock;

        public StockService(
            IStockRepository repository,
            ISupplierClient suppliers,
            ILogger<StockService> logger,
            TimeProvider clock)
        {
            _repository = repository ?? throw new ArgumentNullException(nameof(repository));
            _suppliers = suppliers;
            _logger = logger;
            _clock = clock;
        }

        /// <summary>How many units to order above the reorder level when restocking.</summary>
        public int ReorderMargin { get; init; } = 10;

        /// <summary>
        /// Books goods received from a supplier delivery into stock.
        /// </summary>
        /// <param name="sku">The item received.</param>
        /// <param name="quantity">Units received; must be positive.</param>
        public async Task<StockItem> ReceiveAsync(
            string sku, int quantity, CancellationToken cancellationToken = default)
        {
            if (quantity <= 0)
            {
                throw new ArgumentOutOfRangeException(nameof(quantity), "must be positive");
            }
            var item = await LoadAsync(sku, cancellationToken);
            item.Apply(new StockMovement(sku, quantity, "received", _clock.GetUtcNow()));
            await _repository.SaveAsync(item, cancellationToken);
            _logger.LogInformation("Received {Quantity} of {Sku}", quantity, sku);
            return item;
        }

        /// <summary>
        /// Takes the units of a customer order out of stock, all lines or none.
        /// </summary>
        /// <returns>The items whose stock fell to the reorder level.</returns>
        public async Task<IReadOnlyList<StockItem>> ShipOrderAsync(
            IReadOnlyDictionary<string, int> lines, CancellationToken cancellationToken = default)
        {
            var items = new List<StockItem>();
            foreach (var (sku, quantity) in lines)
            {
                var item = await LoadAsync(sku, cancellationToken);
                if (item.OnHand < quantity)
                {
                    throw new InvalidOperationException($"{sku}: {quantity} ordered, {item.OnHand} on hand");
                }
                items.Add(item);
            }
            foreach (var item in items)
            {
                item.Apply(new StockMovement(item.Sku, -lines[item.Sku], "shipped", _clock.GetUtcNow()));
                await _repository.SaveAsync(item, cancellationToken);
            }
            return items.Where(i => i.NeedsReorder).ToList();
        }

        /// <summary>
        /// Places a purchase order with the supplier for every item at or below its reorder
        /// level, enough to bring it back above the level by <see cref="ReorderMargin"/>.
        /// </summary>
        public async Task<int> ReorderLowStockAsync(CancellationToken cancellationToken = default)
        {
            var ordered = 0;
            foreach (var item in await _repository.ListAsync(cancellationToken))
            {
                if (!item.NeedsReorder)
                {
                    continue;
                }
                var quantity = item.ReorderLevel - item.OnHand + ReorderMargin;
                var reference = await _suppliers.OrderAsync(item.Sku, quantity, cancellationToken);
                _logger.LogInformation("Ordered {Quantity} of {Sku} as {Reference}", quantity, item.Sku, reference);
                ordered++;
            }
            return ordered;
        }

        /// <summary>
        /// Writes off damaged or lost units, recording why they left the shelves.
        /// </summary>
        public async Task WriteOffAsync(
            string sku, int quantity, string reason, CancellationToken cancellationToken = default)
        {
            var item = await LoadAsync(sku, cancellationToken);
            item.Apply(new StockMovement(sku, -quantity, $"write-off: {reason}", _clock.GetUtcNow()));
            await _repository.SaveAsync(item, cancellationToken);
        }

        private async Task<StockItem> LoadAsync(string sku, CancellationToken cancellationToken)
        {
            return await _repository.FindAsync(sku, cancellationToken)
                ?? throw new KeyNotFoundException($"unknown SKU {sku}");
        }
    }
}
