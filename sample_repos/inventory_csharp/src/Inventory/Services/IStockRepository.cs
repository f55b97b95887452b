using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Inventory.Models;

namespace Inventory.Services
{
    /// <summary>
    /// Where stock items are loaded from and saved to.
    /// </summary>
    public interface IStockRepository
    {
        Task<StockItem?> FindAsync(string sku, CancellationToken cancellationToken = default);

        Task<IReadOnlyList<StockItem>> ListAsync(CancellationToken cancellationToken = default);

        Task SaveAsync(StockItem item, CancellationToken cancellationToken = default);
    }

    /// <summary>Sends purchase orders to suppliers.</summary>
    public interface ISupplierClient
    {
        Task<string> OrderAsync(string sku, int quantity, CancellationToken cancellationToken);
    }
}
